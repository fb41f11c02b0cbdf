// Cold timing: L2 flushed before every sample, kernel GPU time from CUPTI,
// callables interleaved, guards around the candidate's calls. Hot timing and
// host latency: timing_hot.cpp.
#include "worker/timing.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>
#include <random>

#include <fmt/format.h>

#include "core/stats.hpp"
#include "worker/check.hpp"
#include "worker/detail/activity.hpp"
#include "worker/detail/timer.hpp"
#include "worker/probes.hpp"
#include "worker/timing_rules.hpp"

namespace tessera::worker {

namespace {

using Clock = std::chrono::steady_clock;
constexpr int kMaxSlots = 4096;           // clock-probe slots per batch
constexpr double kBatchTargetMs = 25.0;   // enqueue about this much GPU work per batch
constexpr double kFlushEstimateUs = 45.0; // flush + probe cost per sample, for batch sizing

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// Which samples of a batch are checked: each guarded sample with the guard's
// probability, and at least one per guarded callable per batch, so every
// batch ends with a verdict. Drawn after the order is fixed, from the timer's
// seed, which the candidate never sees.
void choose_checks(std::vector<TimedSlot>& slots, const std::vector<GuardedCall>& calls, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (std::size_t c = 0; c < calls.size(); ++c) {
    const CallGuard* g = calls[c].guard;
    if (!g || !g->check) continue;
    std::vector<std::size_t> mine;
    bool any = false;
    for (std::size_t j = 0; j < slots.size(); ++j) {
      if (slots[j].call != int(c)) continue;
      mine.push_back(j);
      slots[j].check = u(rng) < g->check_fraction;
      any = any || slots[j].check;
    }
    if (!any && !mine.empty()) slots[mine[rng() % mine.size()]].check = true;
  }
}

}  // namespace

bool converged(const TimingStats& s, const TimingOptions& o) {
  return s.samples >= o.min_samples && (s.rel_spread <= o.max_rel_spread || s.median_ci <= o.max_median_ci);
}

TimingStats summarize(std::vector<double> xs, const std::string& method) {
  TimingStats s;
  s.method = method;
  s.samples = static_cast<int>(xs.size());
  if (xs.empty()) {
    s.status = "failed";
    s.reason = "no sample was kept";
    return s;
  }
  std::sort(xs.begin(), xs.end());
  s.status = "measured";
  s.min_us = xs.front();
  s.max_us = xs.back();
  s.median_us = stats::quantile(xs, 0.5);
  s.p10_us = stats::quantile(xs, 0.1);
  s.p90_us = stats::quantile(xs, 0.9);
  s.mean_us = std::accumulate(xs.begin(), xs.end(), 0.0) / double(xs.size());
  s.rel_spread = stats::relative_spread(s.p10_us, s.p90_us, s.median_us);
  // Large-sample CI of the median: 1.58 * IQR / sqrt(n) (McGill et al.) is the
  // 95% notch half-width; tight enough means more samples would not move it.
  const double iqr = stats::quantile(xs, 0.75) - stats::quantile(xs, 0.25);
  s.median_ci = s.median_us > 0 ? 1.58 * iqr / std::sqrt(double(xs.size())) / s.median_us : 0;
  return s;
}

Timer::Impl::Impl(cudaStream_t s) : stream(s), probe_slots(kMaxSlots * sizeof(float)) {
  int dev = 0, l2 = 0;
  TESSERA_CUDA_CHECK(cudaGetDevice(&dev));
  TESSERA_CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev));
  scratch = DeviceBuffer(std::max<std::size_t>(2 * std::size_t(l2), 8u << 20));
  for (int i = 0; i < 2 * kMaxSlots / 8; ++i) events.emplace_back();
  for (int i = 0; i < kMaxSlots / 8; ++i) slot_done.emplace_back();
}

void Timer::Impl::run_batch(const std::vector<GuardedCall>& calls, const std::vector<TimedSlot>& slots, bool use_cupti,
                            std::vector<double>& times_us, std::vector<float>& clocks) {
  Impl& t = *this;
  const int n = static_cast<int>(slots.size());
  auto& trace = detail::ActivityTrace::instance();
  if (use_cupti) trace.drain();  // drop anything recorded before this batch
  for (const auto& c : calls)
    if (c.guard && c.guard->begin_batch) c.guard->begin_batch(t.stream);
  for (int j = 0; j < n; ++j) {
    const GuardedCall& c = calls[slots[j].call];
    if (c.guard && c.guard->prepare) c.guard->prepare(t.stream);
    launch_l2_flush(t.scratch.get(), t.scratch.bytes(), t.salt++, t.stream);
    launch_clock_probe(t.probe_slots.as<float>(), j, t.stream);
    if (!use_cupti) TESSERA_CUDA_CHECK(cudaEventRecord(t.events[2 * j].get(), t.stream));
    c.launch(t.stream);
    if (!use_cupti) TESSERA_CUDA_CHECK(cudaEventRecord(t.events[2 * j + 1].get(), t.stream));
    if (slots[j].check) c.guard->check(t.stream);
    TESSERA_CUDA_CHECK(cudaEventRecord(t.slot_done.at(j).get(), t.stream));
  }
  // Each finished slot is progress; a call that never finishes stops the
  // heartbeats, and the parent's silence limit ends the worker.
  for (int j = 0; j < n; ++j) {
    TESSERA_CUDA_CHECK(cudaEventSynchronize(t.slot_done[j].get()));
    t.beat();
  }
  // Device-wide: work a call left on other streams must finish too.
  TESSERA_CUDA_CHECK(cudaDeviceSynchronize());
  clocks.resize(n);
  TESSERA_CUDA_CHECK(cudaMemcpy(clocks.data(), t.probe_slots.get(), n * sizeof(float), cudaMemcpyDeviceToHost));
  times_us.assign(n, std::nan(""));
  if (!use_cupti) {
    for (int j = 0; j < n; ++j) {
      float ms = 0;
      TESSERA_CUDA_CHECK(cudaEventElapsedTime(&ms, t.events[2 * j].get(), t.events[2 * j + 1].get()));
      times_us[j] = 1000.0 * ms;
    }
    return;
  }
  auto recs = trace.drain();
  std::sort(recs.begin(), recs.end(), [](auto& a, auto& b) { return a.start < b.start; });
  // Sample j owns every record of the measured work (not the flush, probe or
  // harness kernels) that starts after probe j ends and before probe j+1 starts.
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

Timer::Timer(cudaStream_t stream, TimingOptions options) : impl_(std::make_unique<Impl>(stream)), options_(options) {}
Timer::~Timer() = default;

void Timer::set_heartbeat(std::function<void()> heartbeat) { impl_->heartbeat = std::move(heartbeat); }

bool Timer::cupti_available() const { return detail::ActivityTrace::instance().available(); }

double Timer::fastest_clock_ghz() const { return impl_->fastest_clock_ghz; }

TimingStats Timer::cold(const LaunchFn& launch) { return cold_interleaved({launch}).front(); }

std::vector<TimingStats> Timer::cold_interleaved(const std::vector<LaunchFn>& fns) {
  std::vector<GuardedCall> calls;
  for (const auto& f : fns) calls.push_back({f, nullptr});
  return cold_guarded(calls, 0).stats;
}

GuardedTiming Timer::cold_guarded(const std::vector<GuardedCall>& calls, std::uint64_t seed) {
  const int k = static_cast<int>(calls.size());
  const bool use_cupti = cupti_available();
  const std::string method = use_cupti ? "cupti_activity" : "cuda_events";
  std::mt19937_64 rng(seed);
  GuardedTiming out;
  bool guarded = false;
  for (const auto& c : calls) guarded = guarded || c.guard != nullptr;
  for (int w = 0; w < options_.warmup_calls; ++w)
    for (auto& c : calls) {
      if (c.guard && c.guard->prepare) c.guard->prepare(impl_->stream);
      c.launch(impl_->stream);
    }
  TESSERA_CUDA_CHECK(cudaDeviceSynchronize());

  std::vector<SampleSet> sets(k);
  std::vector<double> estimate(k, 100.0);
  out.stats.resize(k);
  const auto t0 = Clock::now();
  for (int batch = 0;; ++batch) {
    double round_us = 0;
    for (double e : estimate) round_us += e + kFlushEstimateUs;
    int rounds = std::clamp(static_cast<int>(kBatchTargetMs * 1000.0 / round_us), 1, kMaxSlots / k);
    rounds = std::min(rounds, impl_->events.size() > 0 ? static_cast<int>(impl_->events.size() / 2 / k) : rounds);
    rounds = std::max(rounds, 1);
    std::vector<TimedSlot> slots;
    for (int r = 0; r < rounds; ++r)
      for (int i = 0; i < k; ++i) slots.push_back({i, false});
    choose_checks(slots, calls, rng);
    std::vector<double> times;
    std::vector<float> clocks;
    impl_->run_batch(calls, slots, use_cupti, times, clocks);
    for (const auto& c : calls) {
      if (!c.guard) continue;
      for (const auto& s : slots) {
        if (&calls[s.call] != &c) continue;
        ++out.guarded_calls;
        out.checked_calls += s.check;
      }
      if (c.guard->verdict && out.violation.empty()) out.violation = c.guard->verdict();
    }
    std::vector<int> call_of;
    for (const auto& s : slots) call_of.push_back(s.call);
    sort_batch(call_of, times, clocks, options_.throttle_fraction, sets);
    impl_->fastest_clock_ghz = std::max(impl_->fastest_clock_ghz, double(reference_clock(clocks)));
    for (int i = 0; i < k; ++i) {
      out.stats[i] = summarize(sets[i].kept_us, method);
      if (out.stats[i].samples > 0) estimate[i] = out.stats[i].median_us;
    }
    impl_->beat();
    const double elapsed = ms_since(t0);
    if (cold_should_stop(out.stats, sets, options_, elapsed, batch + 1, guarded, !out.violation.empty())) {
      for (int i = 0; i < k; ++i) out.stats[i] = cold_stats(sets[i], method, options_, impl_->fastest_clock_ghz, elapsed);
      return out;
    }
  }
}

GuardedTiming cold_guarded_retried(Timer& timer, const std::vector<GuardedCall>& calls, std::uint64_t seed,
                                   int attempts) {
  // Each attempt draws its checks afresh: the seed moves with the attempt.
  return retry_machine_failures(
      [&](int attempt) { return timer.cold_guarded(calls, seed + 0x9E3779B97F4A7C15ULL * std::uint64_t(attempt - 1)); },
      attempts);
}

}  // namespace tessera::worker
