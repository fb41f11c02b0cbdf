// The pool path of `tessera bench scale`: one EvaluatorPool over the point's
// GPUs, as search and the Python Pool build theirs, and one evaluate_batch
// of the point's candidates.
#include <future>
#include <map>

#include <fmt/format.h>

#include "bench/detail/gpu_sampler.hpp"
#include "bench/detail/scale_run.hpp"
#include "bench/detail/stage_samples.hpp"
#include "harness/pool.hpp"

namespace tessera::bench::detail {

namespace {

// One evaluation on every evaluator at once, outside the figures: each
// worker starts, loads the task's buffers and autotunes its baselines (the
// stored autotune makes that quick), and the compile path is exercised once.
std::string warm_up(EvaluatorPool& pool, const Candidate& base, const Task& task, const EvalOptions& eo,
                    const std::string& tag) {
  const auto cands = scale_candidates(base, tag + "-warmup", int(pool.size()));
  std::vector<std::future<EvalResult>> done;
  for (std::size_t i = 0; i < pool.size(); ++i) {
    auto promise = std::make_shared<std::promise<EvalResult>>();
    done.push_back(promise->get_future());
    pool.submit_to(i, [promise, &c = cands[i], &task, &eo](Evaluator& ev, std::size_t) {
      promise->set_value(evaluate_guarded(ev, c, task, eo));
    });
  }
  std::string problems;
  for (std::size_t i = 0; i < done.size(); ++i) {
    const EvalResult r = done[i].get();
    if (r.status != Status::ok && r.status != Status::compiled)
      problems += fmt::format("{}warm-up on GPU {} was {}: {}", problems.empty() ? "" : "; ", i, to_string(r.status),
                              r.reason);
  }
  return problems;
}

// Each GPU's share of the wall time spent in evaluations (their wall_ms),
// matched by the GPU's uuid; compile-only results name no GPU, so every
// slot gets the mean.
std::vector<double> busy_of(const EvaluatorPool& pool, const std::vector<EvalResult>& results, double wall_s) {
  std::vector<double> busy(pool.size(), 0.0);
  double unmatched = 0;
  for (const auto& r : results) {
    bool matched = false;
    for (std::size_t i = 0; i < pool.size() && !matched; ++i)
      if (!r.device.uuid.empty() && r.device.uuid == pool.evaluator(i).device().uuid) {
        busy[i] += r.wall_ms;
        matched = true;
      }
    if (!matched) unmatched += r.wall_ms;
  }
  for (auto& b : busy) b = wall_s > 0 ? (b + unmatched / double(pool.size())) / (1000 * wall_s) : 0;
  return busy;
}

ScalePoint measure(ScaleRun& run, EvaluatorPool& pool, const std::vector<int>& devices, const Task& task) {
  const ScaleOptions& o = run.options;
  const std::string tag = fmt::format("pool-{}-g{}", task.shape(), devices.size());
  ScalePoint p = new_point("pool", task, devices);
  p.note = warm_up(pool, run.base, task, o.eval, tag);

  const auto cands = scale_candidates(run.base, tag, o.per_gpu * p.gpus);
  std::vector<EvalRequest> batch;
  for (const auto& c : cands) batch.push_back({c, task});
  if (o.warm_cache) {
    pool.evaluator(0).precompile(cands);
  } else {
    // As many compiles at once as the batch will run, outside the figures: a
    // service has its compile servers running (docs/harness.md); then nothing compiled.
    pool.evaluator(0).precompile(scale_candidates(run.base, tag + "-servers", int(cands.size())));
    run.cache.clear_kernels();
  }

  GpuSampler sampler(devices, o.sample_period_s, o.nvml_library);
  note_nvml(run, sampler.problem());
  const auto t0 = std::chrono::steady_clock::now();
  const auto results = pool.evaluate_batch(batch, o.eval, [&](std::size_t, std::size_t) {
    run.progress.advance(fmt::format("pool {} on {} GPU(s)", p.shape, p.gpus));
  });
  p.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  p.gpu = sampler.finish();

  StageSamples stages;
  for (const auto& r : results) {
    stages.add_result(r);
    ++p.statuses[to_string(r.status)];
    if (r.compile.cached) ++p.compile_cache_hits;
  }
  p.evals = int(results.size());
  p.evals_per_min = p.wall_s > 0 ? 60.0 * p.evals / p.wall_s : 0;
  p.stages = stages.figures();
  p.cold = stages.cold();
  const auto busy = busy_of(pool, results, p.wall_s);
  for (std::size_t i = 0; i < p.gpu.size() && i < busy.size(); ++i) p.gpu[i].busy = busy[i];
  return p;
}

}  // namespace

std::vector<ScalePoint> run_pool_points(ScaleRun& run, int gpus) {
  const auto devices = devices_of(run.options, gpus);
  auto pool = make_pool(run.options.sandbox, devices);
  pool->start_all();
  std::vector<ScalePoint> out;
  for (const auto& task : run.options.tasks) out.push_back(measure(run, *pool, devices, task));
  return out;
}

}  // namespace tessera::bench::detail
