#include "harness/gpu/timing.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>

#include <fmt/format.h>

#include "harness/gpu/check.hpp"
#include "harness/gpu/detail_activity.hpp"
#include "harness/gpu/handles.hpp"
#include "harness/gpu/probes.hpp"

namespace tessera::gpu {

namespace {

using Clock = std::chrono::steady_clock;
constexpr int kMaxSlots = 4096;           // clock-probe slots per batch
constexpr double kBatchTargetMs = 25.0;   // enqueue about this much GPU work per batch
constexpr double kFlushEstimateUs = 45.0; // flush + probe cost per sample, for batch sizing

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

double percentile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  double pos = q * double(sorted.size() - 1);
  auto lo = static_cast<std::size_t>(std::floor(pos));
  auto hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (pos - double(lo)) * (sorted[hi] - sorted[lo]);
}

bool converged(const TimingStats& s, const TimingOptions& o) {
  return s.samples >= o.min_samples && (s.rel_spread <= o.max_rel_spread || s.median_ci <= o.max_median_ci);
}

}  // namespace

TimingStats summarize(std::vector<double> xs, const std::string& method) {
  TimingStats s;
  s.method = method;
  s.samples = static_cast<int>(xs.size());
  if (xs.empty()) {
    s.status = "failed";
    return s;
  }
  std::sort(xs.begin(), xs.end());
  s.status = "measured";
  s.min_us = xs.front();
  s.max_us = xs.back();
  s.median_us = percentile(xs, 0.5);
  s.p10_us = percentile(xs, 0.1);
  s.p90_us = percentile(xs, 0.9);
  s.mean_us = std::accumulate(xs.begin(), xs.end(), 0.0) / double(xs.size());
  s.rel_spread = s.median_us > 0 ? (s.p90_us - s.p10_us) / s.median_us : 0;
  // Large-sample CI of the median: 1.58 * IQR / sqrt(n) (McGill et al.) is the
  // 95% notch half-width; tight enough means more samples would not move it.
  const double iqr = percentile(xs, 0.75) - percentile(xs, 0.25);
  s.median_ci = s.median_us > 0 ? 1.58 * iqr / std::sqrt(double(xs.size())) / s.median_us : 0;
  return s;
}

struct Timer::Impl {
  cudaStream_t stream;
  DeviceBuffer scratch;
  DeviceBuffer probe_slots;
  std::vector<Event> events;
  unsigned salt = 1;
  std::function<void()> heartbeat;

  explicit Impl(cudaStream_t s) : stream(s), probe_slots(kMaxSlots * sizeof(float)) {
    int dev = 0, l2 = 0;
    TESSERA_CUDA_CHECK(cudaGetDevice(&dev));
    TESSERA_CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev));
    scratch = DeviceBuffer(std::max<std::size_t>(2 * std::size_t(l2), 8u << 20));
    for (int i = 0; i < 2 * kMaxSlots / 8; ++i) events.emplace_back();
  }

  // Enqueues flush, probe, call for each entry of `order`; returns one kernel
  // time (or NaN) and one clock reading per entry.
  void run_batch(const std::vector<LaunchFn>& fns, const std::vector<int>& order, bool use_cupti,
                 std::vector<double>& times_us, std::vector<float>& clocks) {
    const int n = static_cast<int>(order.size());
    auto& trace = detail::ActivityTrace::instance();
    if (use_cupti) trace.drain();  // drop anything recorded before this batch
    for (int j = 0; j < n; ++j) {
      launch_l2_flush(scratch.get(), scratch.bytes(), salt++, stream);
      launch_clock_probe(probe_slots.as<float>(), j, stream);
      if (!use_cupti) TESSERA_CUDA_CHECK(cudaEventRecord(events[2 * j].get(), stream));
      fns[order[j]](stream);
      if (!use_cupti) TESSERA_CUDA_CHECK(cudaEventRecord(events[2 * j + 1].get(), stream));
    }
    // Device-wide: work a call left on other streams must finish too.
    TESSERA_CUDA_CHECK(cudaDeviceSynchronize());
    clocks.resize(n);
    TESSERA_CUDA_CHECK(cudaMemcpy(clocks.data(), probe_slots.get(), n * sizeof(float), cudaMemcpyDeviceToHost));
    times_us.assign(n, std::nan(""));
    if (!use_cupti) {
      for (int j = 0; j < n; ++j) {
        float ms = 0;
        TESSERA_CUDA_CHECK(cudaEventElapsedTime(&ms, events[2 * j].get(), events[2 * j + 1].get()));
        times_us[j] = 1000.0 * ms;
      }
      return;
    }
    auto recs = trace.drain();
    std::sort(recs.begin(), recs.end(), [](auto& a, auto& b) { return a.start < b.start; });
    // Sample j owns every non-harness record that starts after probe j ends
    // and before probe j+1 starts.
    std::vector<std::pair<std::uint64_t, std::uint64_t>> windows;
    for (auto& r : recs)
      if (r.who == detail::ActivityRecord::Who::probe) windows.push_back({r.end, UINT64_MAX});
    for (std::size_t w = 0; w + 1 < windows.size(); ++w) windows[w].second = windows[w + 1].first;
    if (static_cast<int>(windows.size()) != n) return;  // records lost: every sample of the batch is discarded
    std::size_t w = 0;
    std::vector<std::uint64_t> lo(n, UINT64_MAX), hi(n, 0);
    for (auto& r : recs) {
      if (r.who != detail::ActivityRecord::Who::other) continue;
      while (w < windows.size() && r.start >= windows[w].second) ++w;
      if (w >= windows.size() || r.start < windows[w].first) continue;
      lo[w] = std::min(lo[w], r.start);
      hi[w] = std::max(hi[w], r.end);
    }
    for (int j = 0; j < n; ++j)
      if (hi[j] > lo[j]) times_us[j] = double(hi[j] - lo[j]) / 1000.0;
  }
};

Timer::Timer(cudaStream_t stream, TimingOptions options) : impl_(std::make_unique<Impl>(stream)), options_(options) {}
Timer::~Timer() = default;

void Timer::set_heartbeat(std::function<void()> heartbeat) { impl_->heartbeat = std::move(heartbeat); }

bool Timer::cupti_available() const { return detail::ActivityTrace::instance().available(); }

TimingStats Timer::cold(const LaunchFn& launch) { return cold_interleaved({launch}).front(); }

std::vector<TimingStats> Timer::cold_interleaved(const std::vector<LaunchFn>& fns) {
  const int k = static_cast<int>(fns.size());
  const bool use_cupti = cupti_available();
  const std::string method = use_cupti ? "cupti_activity" : "cuda_events";
  for (int w = 0; w < options_.warmup_calls; ++w)
    for (auto& f : fns) f(impl_->stream);
  TESSERA_CUDA_CHECK(cudaDeviceSynchronize());

  std::vector<std::vector<double>> kept(k);
  std::vector<int> throttled(k, 0), lost(k, 0);
  std::vector<double> estimate(k, 100.0);
  std::vector<TimingStats> stats(k);
  const auto t0 = Clock::now();
  for (;;) {
    double round_us = 0;
    for (double e : estimate) round_us += e + kFlushEstimateUs;
    int rounds = std::clamp(static_cast<int>(kBatchTargetMs * 1000.0 / round_us), 1, kMaxSlots / k);
    rounds = std::min(rounds, impl_->events.size() > 0 ? static_cast<int>(impl_->events.size() / 2 / k) : rounds);
    rounds = std::max(rounds, 1);
    std::vector<int> order;
    for (int r = 0; r < rounds; ++r)
      for (int i = 0; i < k; ++i) order.push_back(i);
    std::vector<double> times;
    std::vector<float> clocks;
    impl_->run_batch(fns, order, use_cupti, times, clocks);
    // A sample is throttled when its SM clock is well below the fastest clock
    // seen in this batch: a transient dip, not sustained power capping.
    const float max_clock = *std::max_element(clocks.begin(), clocks.end());
    for (std::size_t j = 0; j < order.size(); ++j) {
      const int i = order[j];
      if (std::isnan(times[j])) ++lost[i];
      else if (clocks[j] < options_.throttle_fraction * max_clock) ++throttled[i];
      else kept[i].push_back(times[j]);
    }
    bool all_converged = true;
    for (int i = 0; i < k; ++i) {
      stats[i] = summarize(kept[i], method);
      if (stats[i].samples > 0) estimate[i] = stats[i].median_us;
      all_converged = all_converged && converged(stats[i], options_);
    }
    if (impl_->heartbeat) impl_->heartbeat();
    const double elapsed = ms_since(t0);
    const int total = static_cast<int>(kept[0].size());
    if ((all_converged && elapsed >= options_.min_time_ms) || elapsed >= options_.timeout_ms ||
        total >= options_.max_samples) {
      for (int i = 0; i < k; ++i) {
        stats[i].converged = converged(stats[i], options_);
        stats[i].discarded_throttled = throttled[i];
        stats[i].discarded_other = lost[i];
        stats[i].elapsed_ms = elapsed;
      }
      return stats;
    }
  }
}

TimingStats Timer::hot(const LaunchFn& launch) {
  cudaStream_t s = impl_->stream;
  const int batch = options_.hot_batch;
  // Try to capture `batch` back-to-back calls as one graph: replay removes
  // the host launch path from the measurement.
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  std::string method = "graph_replay";
  if (cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal) == cudaSuccess) {
    try {
      for (int i = 0; i < batch; ++i) launch(s);
    } catch (...) {
    }
    if (cudaStreamEndCapture(s, &graph) != cudaSuccess || graph == nullptr ||
        cudaGraphInstantiate(&exec, graph, 0) != cudaSuccess) {
      exec = nullptr;
    }
  }
  (void)cudaGetLastError();  // a failed capture leaves an error that is not the candidate's
  if (!exec) method = "back_to_back";
  auto run = [&] {
    if (exec) TESSERA_CUDA_CHECK(cudaGraphLaunch(exec, s));
    else
      for (int i = 0; i < batch; ++i) launch(s);
  };
  std::vector<double> xs;
  Event a, b;
  run();
  TESSERA_CUDA_CHECK(cudaStreamSynchronize(s));
  const auto t0 = Clock::now();
  TimingStats st;
  for (;;) {
    TESSERA_CUDA_CHECK(cudaEventRecord(a.get(), s));
    run();
    TESSERA_CUDA_CHECK(cudaEventRecord(b.get(), s));
    TESSERA_CUDA_CHECK(cudaEventSynchronize(b.get()));
    float ms = 0;
    TESSERA_CUDA_CHECK(cudaEventElapsedTime(&ms, a.get(), b.get()));
    xs.push_back(1000.0 * ms / batch);
    st = summarize(xs, method);
    const double elapsed = ms_since(t0);
    if ((converged(st, options_) && elapsed >= options_.min_time_ms) || elapsed >= options_.timeout_ms ||
        st.samples >= options_.max_samples)
      break;
  }
  if (exec) cudaGraphExecDestroy(exec);
  if (graph) cudaGraphDestroy(graph);
  st.converged = converged(st, options_);
  st.elapsed_ms = ms_since(t0);
  return st;
}

double Timer::host_latency_us(const LaunchFn& launch, int calls) {
  std::vector<double> xs;
  launch(impl_->stream);
  TESSERA_CUDA_CHECK(cudaStreamSynchronize(impl_->stream));
  for (int i = 0; i < calls; ++i) {
    const auto t0 = Clock::now();
    launch(impl_->stream);
    TESSERA_CUDA_CHECK(cudaStreamSynchronize(impl_->stream));
    xs.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
  }
  return summarize(xs, "host").median_us;
}

}  // namespace tessera::gpu
