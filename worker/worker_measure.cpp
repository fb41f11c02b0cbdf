#include "worker/worker_measure.hpp"

#include <fmt/format.h>

#include "worker/baselines/baselines.hpp"
#include "worker/check.hpp"
#include "worker/counters.hpp"
#include "worker/integrity.hpp"

namespace tessera::worker {

namespace {

// The profiler ran the call as our own replay (no fallback, no error): its
// last output is the call's.
bool counter_passes_checkable(const nlohmann::json& counters) {
  return counters.is_object() && !counters.contains("error") && !counters.contains("fallback_reason");
}

// Distinct streams of randomness from the request's seed: which cold calls are
// checked, which hot replay buffer, which host-latency calls, the variation.
constexpr std::uint64_t kGuardSalt = 0x6A09E667F3BCC908ULL;
constexpr std::uint64_t kColdSalt = 0xBB67AE8584CAA73BULL;
constexpr std::uint64_t kHotSalt = 0x3C6EF372FE94F82BULL;
constexpr std::uint64_t kHostSalt = 0xA54FF53A5F1D36F1ULL;
constexpr int kHostLatencyCalls = 50;

bool fail(EvalResult& r, const std::string& phase, const std::string& why) {
  r.status = Status::wrong_answer;
  r.reason = fmt::format("{} ({})", why, phase);
  r.verify.status = "failed";
  r.verify.failure = r.reason;
  return false;
}

}  // namespace

bool measure_candidate(MeasureContext& ctx, EvalResult& r) {
  TaskBuffers& b = ctx.buffers;
  cudaStream_t s = ctx.stream;
  CandidateGuards guards(b, ctx.workspace, s, ctx.seed ^ kGuardSalt);
  r.integrity.reference_hidden = b.acc.hidden() && b.verdict.hidden();
  auto launch = [&](cudaStream_t st) { ctx.callable.launch(ctx.params, st); };

  // Cold, interleaved with every runnable baseline.
  std::vector<GuardedCall> calls = {{launch, &guards.cold()}};
  std::vector<const baselines::Baseline*> bls;
  if (ctx.suite) {
    for (const auto& bl : ctx.suite->baselines()) {
      if (bl.runnable()) {
        bls.push_back(&bl);
        calls.push_back({bl.launch, nullptr});
      } else {
        r.baselines.push_back({bl.name, bl.algo, {}, bl.error});
      }
    }
  }
  ctx.heartbeat("timing");
  const GuardedTiming cold = cold_guarded_retried(ctx.timer, calls, ctx.seed ^ kColdSalt);
  r.integrity.timed_calls = cold.guarded_calls;
  r.integrity.checked_calls = cold.checked_calls;
  r.integrity.inputs_refreshed = cold.guarded_calls > 0;  // every guarded call gets fresh inputs
  if (!cold.violation.empty()) return fail(r, "cold timing", cold.violation);
  r.cold = cold.stats[0];
  for (std::size_t i = 0; i < bls.size(); ++i) r.baselines.push_back({bls[i]->name, bls[i]->algo, cold.stats[i + 1], ""});

  if (ctx.options.hot) {
    // Every call of the replayed graph reads inputs and writes an output of
    // its own, so every back-to-back call can be the one that is checked and
    // none can reuse another's answer.
    const HotTiming hot = ctx.timer.hot_guarded(guards.hot(ctx.callable, ctx.params, ctx.timer.options().hot_batch),
                                                ctx.seed ^ kHotSalt);
    r.integrity.checked_hot_replays = hot.checked_replays;
    r.integrity.hot_calls = hot.calls;
    if (!hot.violation.empty()) return fail(r, "hot timing", hot.violation);
    r.hot = hot.stats;
    std::string host_violation;
    r.host_latency_us =
        ctx.timer.host_latency_us(launch, kHostLatencyCalls, &guards.cold(), ctx.seed ^ kHostSalt, &host_violation);
    if (!host_violation.empty()) return fail(r, "host latency", host_violation);
  }

  if (ctx.options.counters) {
    ctx.heartbeat("counters");
    const CounterSet set = parse_counter_set(ctx.options.counter_set);
    CounterOptions co;
    co.metrics = metrics_for(set);
    // The profiler replays the call on the same inputs; its last output is
    // checked when the call ran as our own replay. When the profiler fell back
    // to CUPTI's kernel replay (another profiler held the GPU:
    // CUPTI_ERROR_HARDWARE_BUSY) or failed, CUPTI saved and restored device
    // memory around its passes, so the output need not hold the last pass's
    // result: not checked then (counters are never paid; said in the record).
    const CallGuard& g = guards.cold();
    g.begin_batch(s);
    g.prepare(s);
    r.counters = collect_counters(launch, s, co);
    TESSERA_CUDA_CHECK(cudaStreamSynchronize(s));
    if (counter_passes_checkable(r.counters)) {
      g.check(s);
      TESSERA_CUDA_CHECK(cudaStreamSynchronize(s));
      if (const auto v = g.verdict(); !v.empty()) return fail(r, "counter passes", v);
    } else if (r.counters.is_object()) {
      r.counters["output_checked"] = false;
    }
    if (!r.counters.contains("error")) r.counters["counter_set"] = to_string(set);
  }

  if (const Damage damage = guards.audit(); damage.kind != Damage::Kind::none) {
    if (damage.kind == Damage::Kind::inputs) r.verify.inputs_intact = false;
    else r.verify.canaries_intact = false;
    return fail(r, "after timing", damage.what);
  }
  return true;
}

}  // namespace tessera::worker
