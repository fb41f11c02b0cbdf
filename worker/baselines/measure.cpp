#include "worker/baselines/measure.hpp"

#include <cuda_fp16.h>

#include "worker/baselines/kernels.hpp"
#include "core/error.hpp"
#include "worker/check.hpp"
#include "worker/counters.hpp"
#include "worker/handles.hpp"

namespace tessera::baselines {

namespace {

constexpr float kInputLo = -1.0f;  // inputs uniform in [lo, hi): random, never zeros or constants
constexpr float kInputHi = 1.0f;
constexpr std::uint64_t kSeedA = 0xA11CE, kSeedB = 0xB0B, kSeedBias = 0xB1A5;

}  // namespace

std::vector<BaselineResult> BaselineMeasurement::results() const {
  std::vector<BaselineResult> out;
  for (const auto& r : rows) {
    std::string error = r.baseline.error;
    if (r.measured && !r.check.passed) error = "output check failed: " + r.check.error;
    out.push_back({r.baseline.name, r.baseline.algo, r.cold, error,
                   r.baseline.name == kCublasLtAutotuned ? autotune_trials(autotune) : std::vector<AutotuneTrial>{}});
  }
  return out;
}

bool BaselineMeasurement::all_verified() const {
  for (const auto& r : rows)
    if (r.measured && !r.check.passed) return false;
  return true;
}

BaselineMeasurement measure_baselines(const Task& task, const MeasureOptions& o) {
  worker::Stream stream;
  const std::size_t M = std::size_t(task.m), N = std::size_t(task.n), K = std::size_t(task.k);
  worker::DeviceBuffer A(M * K * sizeof(__half)), B(N * K * sizeof(__half)), C(M * N * sizeof(__half));
  worker::DeviceBuffer bias(task.epilogue == Epilogue::none ? 0 : N * sizeof(__half));
  fill_random_half(A.as<__half>(), M * K, kSeedA, kInputLo, kInputHi, stream.get());
  fill_random_half(B.as<__half>(), N * K, kSeedB, kInputLo, kInputHi, stream.get());
  if (bias.get()) fill_random_half(bias.as<__half>(), N, kSeedBias, kInputLo, kInputHi, stream.get());
  TESSERA_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
  const auto ops = operands_for(task, A.as<__half>(), B.as<__half>(), C.as<__half>(), bias.as<__half>());

  worker::Timer timer(stream.get(), o.timing);
  BaselineSuite suite(task, ops, stream.get(), o.suite);
  suite.prepare(timer);

  BaselineMeasurement m;
  std::vector<worker::LaunchFn> launches;
  std::vector<std::size_t> timed;  // indices into m.rows
  for (const auto& b : suite.baselines()) {
    MeasuredBaseline r;
    r.baseline = b;
    if (b.runnable()) {
      try {
        // NaN poison first (0xFFFF is an fp16 NaN), so an unwritten output fails the check.
        TESSERA_CUDA_CHECK(cudaMemsetAsync(C.get(), 0xFF, C.bytes(), stream.get()));
        b.launch(stream.get());
        TESSERA_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
        r.check = check_sampled(ops, stream.get());
        timed.push_back(m.rows.size());
        launches.push_back(b.launch);
      } catch (const Error& e) {
        r.baseline.error = e.what();
        r.baseline.launch = nullptr;
      }
    }
    m.rows.push_back(std::move(r));
  }
  const std::vector<TimingStats> cold = launches.empty() ? std::vector<TimingStats>{} : timer.cold_interleaved(launches);
  for (std::size_t i = 0; i < timed.size(); ++i) {
    MeasuredBaseline& r = m.rows[timed[i]];
    r.measured = true;
    r.cold = cold.at(i);
    if (o.hot) r.hot = timer.hot(r.baseline.launch);
    if (o.counters) r.counters = worker::collect_counters(r.baseline.launch, stream.get());
  }
  suite.record_times(m.results());
  m.autotune = suite.autotune_report();
  m.previous_times_us = suite.previous_times_us();
  for (auto& r : m.rows) r.baseline.launch = nullptr;  // the suite that owns what they launch is going away
  return m;
}

}  // namespace tessera::baselines
