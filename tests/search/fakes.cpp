#include "fakes.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <thread>

#include "core/hash.hpp"
#include "search/rng.hpp"

namespace tessera::search::testing {

FakeConfig FakeConfig::from(const nlohmann::json& j) {
  FakeConfig c;
  c.block_m = j.value("block_m", 64);
  c.block_n = j.value("block_n", 64);
  c.stages = j.value("stages", 2);
  c.swizzle = j.value("swizzle", 0);
  return c;
}

double fake_speedup(const FakeConfig& c) {
  const double m = 1.0 - 0.15 * std::abs(std::log2(c.block_m / 128.0));
  const double n = 1.0 - 0.12 * std::abs(std::log2(c.block_n / 256.0));
  const double s = 1.0 - 0.08 * std::abs(c.stages - 4);
  const double w = c.swizzle ? 1.0 : 0.93;
  return 1.15 * m * n * s * w;
}

std::string fake_source(const FakeConfig& c) {
  return "// fake kernel\n__global__ void k() { /* " + c.json().dump() + " */ int bm = " + std::to_string(c.block_m) +
         "; int bn = " + std::to_string(c.block_n) + "; int st = " + std::to_string(c.stages) +
         "; int sw = " + std::to_string(c.swizzle) + "; }\n";
}

DeviceSummary FakeEvaluator::device() const {
  DeviceSummary d;
  d.name = name_;
  d.sm_count = 132;
  d.arch = "sm_90a";
  d.peak_tflops = 800;
  return d;
}

void FakeEvaluator::compile_ahead(const Candidate& candidate) {
  ++stats->compiled_ahead;
  std::lock_guard g(mu_);
  ++ahead_[content_hash(candidate.source)];
}

EvalResult FakeEvaluator::evaluate(const Candidate& candidate, const Task& task, const EvalOptions& options) {
  {
    std::lock_guard g(mu_);
    if (ahead_.count(content_hash(candidate.source))) ++stats->evaluated_after_ahead;
  }
  const int now = ++inside_;
  int prev = stats->max_concurrent.load();
  while (now > prev && !stats->max_concurrent.compare_exchange_weak(prev, now)) {
  }
  const int call = ++stats->calls;
  if (delay_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms.load()));
  EvalResult r;
  r.task = task;
  r.candidate_name = candidate.name;
  r.candidate_hash = content_hash(candidate.source);
  r.mode = options.compile_only ? "compile_only" : "full";
  r.device = device();
  r.wall_ms = 5;
  const auto cfg = FakeConfig::from(candidate.meta.value("tile_config", nlohmann::json::object()));
  if (candidate.source.find("#error") != std::string::npos) {
    r.status = Status::compile_error;
    r.reason = "fake compile error";
  } else if ((infra_error_stages > 0 && cfg.stages == infra_error_stages) || call == infra_on_call) {
    r.status = Status::infra_error;
    r.reason = "fake worker lost";
  } else if (options.compile_only) {
    r.status = Status::compiled;
    r.reason = "compile-only";
  } else {
    int ordinal;
    {
      std::lock_guard g(mu_);
      ordinal = seen_[r.candidate_hash]++;
    }
    // Deterministic "noise": a function of the candidate and of how often it was measured.
    Rng noise = Rng::derive(std::hash<std::string>{}(r.candidate_hash), std::uint64_t(ordinal), "noise");
    const double speed = fake_speedup(cfg);
    const double spread = noisy_spread > 0 ? noisy_spread : spread_;
    const double baseline = 1000.0;
    const double median = baseline / speed * (1.0 + spread * 0.25 * (noise.uniform() - 0.5)) *
                          (options.baselines ? beside_baselines : 1.0);
    r.status = Status::ok;
    r.verify.status = "passed";
    r.verify.trials = 5;
    r.verify.trials_passed = 5;
    r.cold.status = "measured";
    r.cold.method = "fake";
    r.cold.samples = 30;
    r.cold.median_us = median;
    r.cold.p10_us = median * (1 - spread / 2);
    r.cold.p90_us = median * (1 + spread / 2);
    r.cold.rel_spread = spread;
    r.cold.converged = true;
    if (options.baselines) {  // as the worker: without them, no speedup
      ++stats->timed_baselines;
      BaselineResult b1{"cublas_tn", "fake", {}, ""};
      b1.cold.median_us = baseline;
      BaselineResult b2{"cublaslt_autotuned", "fake", {}, ""};
      b2.cold.median_us = baseline * 1.02;
      r.baselines = {b1, b2};
      r.best_baseline = "cublas_tn";
      r.best_baseline_us = baseline;
      r.speedup = baseline / median;
    }
    r.tflops = task.tflops_at(median);
    r.peak_fraction = r.tflops / device().peak_tflops;
    r.counters = {{"achieved_occupancy_pct", 10.0 + 10.0 * cfg.stages},
                  {"tensor_pipe_pct", 40.0 + 12.0 * cfg.stages},
                  {"dram_throughput_pct", 30.0 + 0.1 * cfg.block_n},
                  {"sm_throughput_pct", 50.0}};
  }
  --inside_;
  return r;
}

agent::Proposal FakeProposer::propose(const agent::ProposalContext& ctx) {
  ++calls;
  for (const auto& h : ctx.history)
    if (h.result.status == Status::rejected) {
      ++saw_rejected_history;
      break;
    }
  agent::Proposal p;
  p.proposer = name_;
  p.usage.prompt_tokens = tokens_ / 2;
  p.usage.completion_tokens = tokens_ - tokens_ / 2;
  p.usage.cost_usd = usd_;
  Rng rng(ctx.seed);
  if (fail_every > 0 && rng.below(std::uint64_t(fail_every)) == 0) {
    p.ok = false;
    p.error = "fake parse failure";
    return p;
  }
  static constexpr int kBlocks[] = {64, 128, 256};
  FakeConfig c;
  if (ctx.parent) {
    c = FakeConfig::from(ctx.parent->candidate.meta.value("tile_config", nlohmann::json::object()));
    switch (rng.below(4)) {
      case 0: c.block_m = kBlocks[rng.below(3)]; break;
      case 1: c.block_n = kBlocks[rng.below(3)]; break;
      case 2: c.stages = 2 + int(rng.below(4)); break;
      default: c.swizzle = 1 - c.swizzle; break;
    }
  } else {
    c.block_m = kBlocks[rng.below(3)];
    c.block_n = kBlocks[rng.below(3)];
    c.stages = 2 + int(rng.below(4));
    c.swizzle = int(rng.below(2));
  }
  p.ok = true;
  p.candidate.source = fake_source(c) + (broken_stages && c.stages == broken_stages ? "#error broken\n" : "");
  p.candidate.name = "fake_" + std::to_string(c.block_m) + "x" + std::to_string(c.block_n);
  p.candidate.meta = {{"tile_config", c.json()}};
  p.action_kind = "tile_config";
  p.action = c.json().dump();
  p.proposer_info = {{"strategy", ctx.strategy}, {"seed", ctx.seed}};
  p.messages = {{"user", "improve " + ctx.task.id() + " with " + ctx.strategy}, {"assistant", p.action}};
  return p;
}

}  // namespace tessera::search::testing
