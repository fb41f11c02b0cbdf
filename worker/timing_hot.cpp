// Hot timing (warm L2, CUDA graph replay of back-to-back calls) and host
// latency, each with an optional guard (docs/harness.md, "Integrity").
#include <chrono>
#include <random>

#include "worker/check.hpp"
#include "worker/detail/timer.hpp"
#include "worker/timing.hpp"

namespace tessera::worker {

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// Owns a captured graph and its executable form.
class CapturedGraph {
public:
  CapturedGraph(cudaStream_t s, int calls, const std::function<void(int, cudaStream_t)>& launch) {
    if (cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal) != cudaSuccess) return;
    try {
      for (int i = 0; i < calls; ++i) launch(i, s);
    } catch (...) {
    }
    if (cudaStreamEndCapture(s, &graph_) != cudaSuccess || graph_ == nullptr ||
        cudaGraphInstantiate(&exec_, graph_, 0) != cudaSuccess)
      exec_ = nullptr;
    (void)cudaGetLastError();  // a failed capture leaves an error that is not the candidate's
  }
  CapturedGraph(const CapturedGraph&) = delete;
  CapturedGraph& operator=(const CapturedGraph&) = delete;
  ~CapturedGraph() noexcept {
    if (exec_) cudaGraphExecDestroy(exec_);
    if (graph_) cudaGraphDestroy(graph_);
  }
  cudaGraphExec_t exec() const { return exec_; }

private:
  cudaGraph_t graph_ = nullptr;
  cudaGraphExec_t exec_ = nullptr;
};

}  // namespace

TimingStats Timer::hot(const LaunchFn& launch) {
  HotGuard g;
  g.launch_into = [&](int, cudaStream_t s) { launch(s); };
  return hot_guarded(g, 0).stats;
}

HotTiming Timer::hot_guarded(const HotGuard& g, std::uint64_t seed) {
  cudaStream_t s = impl_->stream;
  const int batch = g.calls > 0 ? g.calls : options_.hot_batch;
  std::mt19937_64 rng(seed);
  // Back-to-back calls captured as one graph: replay removes the host launch
  // path from the measurement. Call i reads and writes the buffers of its
  // own parameter block (the guard's).
  CapturedGraph graph(s, batch, g.launch_into);
  const std::string method = graph.exec() ? "graph_replay" : "back_to_back";
  auto run = [&] {
    if (graph.exec()) TESSERA_CUDA_CHECK(cudaGraphLaunch(graph.exec(), s));
    else
      for (int i = 0; i < batch; ++i) g.launch_into(i, s);
  };
  HotTiming out;
  out.calls = batch;
  if (g.begin) g.begin(s);
  if (g.prepare) g.prepare(s);
  run();
  TESSERA_CUDA_CHECK(cudaStreamSynchronize(s));
  std::vector<double> xs;
  Event a, b;
  const auto t0 = Clock::now();
  for (;;) {
    if (g.prepare) g.prepare(s);
    TESSERA_CUDA_CHECK(cudaEventRecord(a.get(), s));
    run();
    TESSERA_CUDA_CHECK(cudaEventRecord(b.get(), s));
    if (g.check) {
      g.check(static_cast<int>(rng() % static_cast<std::uint64_t>(batch)), s);
      ++out.checked_replays;
    }
    TESSERA_CUDA_CHECK(cudaEventSynchronize(b.get()));
    impl_->beat();
    float ms = 0;
    TESSERA_CUDA_CHECK(cudaEventElapsedTime(&ms, a.get(), b.get()));
    xs.push_back(1000.0 * ms / batch);
    out.stats = summarize(xs, method);
    const double elapsed = ms_since(t0);
    if ((converged(out.stats, options_) && elapsed >= options_.min_time_ms) || elapsed >= options_.timeout_ms ||
        out.stats.samples >= options_.max_samples)
      break;
  }
  TESSERA_CUDA_CHECK(cudaStreamSynchronize(s));
  if (g.verdict) out.violation = g.verdict();
  out.stats.converged = converged(out.stats, options_);
  out.stats.elapsed_ms = ms_since(t0);
  return out;
}

double Timer::host_latency_us(const LaunchFn& launch, int calls, const CallGuard* guard, std::uint64_t seed,
                              std::string* violation) {
  cudaStream_t s = impl_->stream;
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<double> xs;
  auto prepare = [&] {
    if (guard && guard->prepare) {
      guard->prepare(s);
      TESSERA_CUDA_CHECK(cudaStreamSynchronize(s));
    }
  };
  if (guard && guard->begin_batch) guard->begin_batch(s);
  prepare();
  launch(s);
  TESSERA_CUDA_CHECK(cudaStreamSynchronize(s));
  bool any_checked = false;
  for (int i = 0; i < calls; ++i) {
    prepare();
    const auto t0 = Clock::now();
    launch(s);
    TESSERA_CUDA_CHECK(cudaStreamSynchronize(s));
    xs.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
    const bool last_chance = i + 1 == calls && !any_checked;
    if (guard && guard->check && (u(rng) < guard->check_fraction || last_chance)) {
      guard->check(s);
      any_checked = true;
    }
    impl_->beat();
  }
  TESSERA_CUDA_CHECK(cudaStreamSynchronize(s));
  if (guard && guard->verdict && violation) *violation = guard->verdict();
  return summarize(xs, "host").median_us;
}

}  // namespace tessera::worker
