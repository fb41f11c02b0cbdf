// Baselines-only sweeps: every baseline timed in this process, one CUDA
// context for the whole sweep.
#include <cuda_runtime_api.h>

#include <chrono>

#include <fmt/format.h>

#include "worker/baselines/measure.hpp"
#include "bench/ceiling.hpp"
#include "bench/measure.hpp"
#include "core/error.hpp"
#include "core/fs.hpp"
#include "core/ceiling.hpp"
#include "worker/check.hpp"
#include "worker/device_summary.hpp"

namespace tessera::bench {

namespace {

// The device with its ceiling from the per-GPU store (docs/harness.md, "The
// ceiling"), so the suite's "% of peak" uses the same figures as every
// evaluation; without a stored ceiling the report says it was not measured.
DeviceSummary device_here(int ordinal) {
  DeviceSummary d = worker::device_summary(ordinal);
  if (auto stored = load_ceiling(d.uuid)) apply_ceiling(d, *stored);
  else d.peak_source = "not measured on this GPU yet (tessera doctor --measure-peak)";
  return d;
}

class BaselineMeasurer final : public ShapeMeasurer {
public:
  explicit BaselineMeasurer(const MeasureSettings& s) : settings_(s) {
    int devices = 0;
    const cudaError_t err = cudaGetDeviceCount(&devices);
    if (err != cudaSuccess || devices == 0)
      throw Error(Error::Kind::unavailable, fmt::format("no CUDA GPU: {}", err != cudaSuccess ? cudaGetErrorString(err)
                                                                                            : "no CUDA devices"));
    if (s.device < 0 || s.device >= devices)
      fail_bad_input(fmt::format("--device {} does not exist (this machine has {} CUDA devices)", s.device, devices));
    TESSERA_CUDA_CHECK(cudaSetDevice(s.device));
    device_ = device_here(s.device);
    options_.hot = s.hot;
    options_.counters = s.counters;
    options_.suite.autotune_max_algos = s.max_algos;
    options_.suite.remeasure = s.remeasure;
    if (s.max_timing_ms > 0) options_.timing.timeout_ms = s.max_timing_ms;
  }

  ShapeRecord measure(const Task& task, const std::string& bucket) override {
    const auto t0 = std::chrono::steady_clock::now();
    ShapeRecord r;
    r.task = task;
    r.bucket = bucket;
    r.device = device_;
    const auto m = baselines::measure_baselines(task, options_);
    r.baselines = m.results();
    for (const auto& row : m.rows)
      r.baseline_details.push_back({row.baseline.name, row.check.passed, row.check.error, row.hot, row.counters});
    raise_peak(r);
    r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    r.finished_at = utc_now_iso();
    return r;
  }

  std::string describe() const override {
    return fmt::format("{} ({}, {} SMs), baselines timed in this process", device_.name, device_.arch, device_.sm_count);
  }

private:
  // As an evaluation does (worker/worker_session.cpp): a baseline above
  // the stored peak becomes the peak, in this sweep's later records and in the
  // per-GPU store, so no later process starts from a probe that read low.
  void raise_peak(ShapeRecord& r) {
    const auto f = fastest_baseline(r);
    if (device_.peak_tflops <= 0) return;  // no stored peak: none is invented from one shape
    if (f && tessera::raise_peak(device_, f->tflops,
                                fmt::format("{} at {}, cold, measured during a sweep (above the peak stored before)",
                                            f->who, f->shape)))
      r.device = device_;
  }

  MeasureSettings settings_;
  baselines::MeasureOptions options_;
  DeviceSummary device_;
};

}  // namespace

std::unique_ptr<ShapeMeasurer> make_baseline_measurer(const MeasureSettings& settings) {
  return std::make_unique<BaselineMeasurer>(settings);
}

}  // namespace tessera::bench
