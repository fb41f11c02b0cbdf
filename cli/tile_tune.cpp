// `tessera tile tune`: a plain search over the tile space through the harness,
// for one shape (--shape) or a task file (--tasks), with a summary table.
//
// Per task: every legal config when the space fits the budget; otherwise the
// seeds plus seeded-random samples (explore), then one-knob neighbours of the
// fastest configs so far (refine). Each batch is compiled in parallel before it
// is measured one at a time. The winner is measured once more, with CUPTI
// counters: picking the fastest of N noisy medians favours a lucky draw, so the
// table reports the confirming measurement, not the sweep's.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/command.hpp"
#include "cli/tile_args.hpp"
#include "harness/core/error.hpp"
#include "harness/core/fs.hpp"
#include "harness/tile/config.hpp"
#include "search/descriptor.hpp"
#include "search/tasks_file.hpp"

namespace tessera::cli {

namespace {

constexpr int kProgressBarWidth = 30;
constexpr int kRefineParents = 3;  // neighbours of this many of the fastest configs per refine round

struct TuneArgs {
  TileArgs tile;
  std::string tasks_file;
  int budget = 50;
  int top = 10;
  std::uint64_t seed = 1;
  double refine = 0.5;  // share of the budget spent on neighbours of the best (when not exhaustive)
  bool counters = false;
  std::string report;
};

struct Evaluated {
  std::string name;
  tile::Config config;
  EvalResult result;
};

struct TaskOutcome {
  Task task;
  std::string plan;  // "exhaustive" or "explore + refine"
  std::vector<Evaluated> evaluated;
  int failures = 0;
  bool confirmed = false;
  Evaluated best;  // the confirming measurement of the sweep's winner
};

bool faster(const Evaluated& x, const Evaluated& y) {
  const bool ox = x.result.status == Status::ok, oy = y.result.status == Status::ok;
  if (ox != oy) return ox;
  return ox && x.result.cold.median_us < y.result.cold.median_us;
}

void progress(const std::string& label, int done, int total, double best_speedup) {
  const int filled = total > 0 ? std::min(kProgressBarWidth, done * kProgressBarWidth / total) : kProgressBarWidth;
  // Nothing timed yet (or compile-only mode): no speedup to show, rather than "0.000x".
  const std::string best = best_speedup > 0 ? fmt::format("best {:.3f}x", best_speedup) : "best n/a (nothing timed)";
  std::fprintf(stderr, "\r%s [%s%s] %d/%d  %s", label.c_str(), std::string(filled, '#').c_str(),
               std::string(kProgressBarWidth - filled, '.').c_str(), done, total, best.c_str());
  if (done >= total) std::fprintf(stderr, "\n");
}

class TaskTuner {
public:
  TaskTuner(const TuneArgs& a, Evaluator& ev, const Task& task, tile::Limits limits, std::string label)
      : a_(a), ev_(ev), task_(task), limits_(std::move(limits)), label_(std::move(label)), rng_(a.seed) {
    opt_.compile_only = a.tile.compile_only;
    opt_.counters = a.counters;
  }

  TaskOutcome run() {
    TaskOutcome out;
    out.task = task_;
    const auto space = space_of(a_.tile, task_, limits_);
    auto all = tile::enumerate(space, task_, limits_, std::size_t(a_.budget) + 1);
    std::erase_if(all, [&](const tile::Config& c) { return !backend_ok(a_.tile, c); });
    if (all.empty()) fail_bad_input(fmt::format("no legal tile config for {} on {}", task_.id(), limits_.arch));
    if (all.size() <= std::size_t(a_.budget)) {
      out.plan = "exhaustive";
      measure(all);
    } else {
      out.plan = "explore + refine";
      const int refine = std::clamp(int(std::lround(a_.budget * a_.refine)), 0, a_.budget - 1);
      measure(explore_plan(space, a_.budget - refine));
      while (int(done_.size()) < a_.budget) {
        auto next = refine_plan(space, a_.budget - int(done_.size()));
        if (next.empty()) break;
        measure(next);
      }
    }
    std::stable_sort(done_.begin(), done_.end(), faster);
    out.failures = int(std::count_if(done_.begin(), done_.end(), [](const Evaluated& e) {
      return e.result.status != Status::ok && e.result.status != Status::compiled;
    }));
    if (!done_.empty() && done_.front().result.status == Status::ok) {
      EvalOptions confirm = opt_;
      confirm.counters = true;
      out.best = done_.front();
      out.best.result = ev_.evaluate(candidate_of(out.best.config, task_), task_, confirm);
      out.confirmed = true;
    }
    out.evaluated = std::move(done_);
    return out;
  }

private:
  std::vector<tile::Config> explore_plan(const tile::Space& space, int n) {
    std::vector<tile::Config> out;
    for (const auto& c : tile::seeds(task_, limits_))
      if (int(out.size()) < n && backend_ok(a_.tile, c) && seen_.insert(tile::name(c)).second) out.push_back(c);
    for (int misses = 0; int(out.size()) < n && misses < 50 * n;) {
      const auto c = tile::sample(space, task_, limits_, rng_);
      if (c && backend_ok(a_.tile, *c) && seen_.insert(tile::name(*c)).second) out.push_back(*c);
      else ++misses;
    }
    return out;
  }

  // Unseen one-knob neighbours of the fastest configs so far, shuffled; at
  // most half the remaining budget per round, so later rounds start from
  // better parents.
  std::vector<tile::Config> refine_plan(const tile::Space& space, int remaining) {
    std::vector<const Evaluated*> ranked;
    for (const auto& e : done_)
      if (e.result.status == Status::ok) ranked.push_back(&e);
    std::stable_sort(ranked.begin(), ranked.end(), [](auto* x, auto* y) { return faster(*x, *y); });
    std::vector<tile::Config> pool;
    for (int i = 0; i < int(ranked.size()) && i < kRefineParents; ++i)
      for (const auto& c : tile::neighbours(ranked[i]->config, space, task_, limits_))
        if (backend_ok(a_.tile, c) && !seen_.count(tile::name(c))) pool.push_back(c);
    if (ranked.empty()) return explore_plan(space, remaining);  // nothing ran (or compile-only): keep sampling
    std::shuffle(pool.begin(), pool.end(), rng_);
    const int take = std::max(1, std::min(remaining, std::max(4, remaining / 2)));
    std::vector<tile::Config> out;
    for (const auto& c : pool)
      if (int(out.size()) < take && seen_.insert(tile::name(c)).second) out.push_back(c);
    return out;
  }

  void measure(const std::vector<tile::Config>& batch) {
    std::vector<Candidate> cands;
    for (const auto& c : batch) cands.push_back(candidate_of(c, task_));
    ev_.precompile(cands);
    for (std::size_t i = 0; i < batch.size(); ++i) {
      Evaluated e{tile::name(batch[i]), batch[i], ev_.evaluate(cands[i], task_, opt_)};
      if (e.result.status == Status::ok) best_speedup_ = std::max(best_speedup_, e.result.speedup);
      done_.push_back(std::move(e));
      progress(label_, int(done_.size()), std::max<int>(a_.budget, int(done_.size())), best_speedup_);
    }
  }

  const TuneArgs& a_;
  Evaluator& ev_;
  Task task_;
  tile::Limits limits_;
  std::string label_;
  std::mt19937_64 rng_;
  EvalOptions opt_;
  std::set<std::string> seen_;
  std::vector<Evaluated> done_;
  double best_speedup_ = 0;
};

std::string shape_of(const Task& t) { return fmt::format("{}x{}x{}", t.m, t.n, t.k); }

// Geometric mean of the confirmed speedups; tasks without one are left out
// (and counted in the table's footer).
double geomean(const std::vector<TaskOutcome>& outs, int& counted) {
  double log_sum = 0;
  counted = 0;
  for (const auto& o : outs)
    if (o.confirmed && o.best.result.status == Status::ok && o.best.result.speedup > 0) {
      log_sum += std::log(o.best.result.speedup);
      ++counted;
    }
  return counted ? std::exp(log_sum / counted) : 0.0;
}

std::string markdown_table(const std::vector<TaskOutcome>& outs, const std::string& device) {
  std::string md = fmt::format(
      "Device: {}. Cold-L2 kernel GPU time (CUPTI), the winner re-measured once after the sweep; speedup = best "
      "cuBLAS/cuBLASLt baseline / kernel, both from that same run.\n\n"
      "| shape | layout | best config | µs | TFLOP/s | % of peak | speedup | best baseline (µs) | bottleneck | "
      "evaluated (failed) |\n|---|---|---|---|---|---|---|---|---|---|\n",
      device);
  for (const auto& o : outs) {
    const auto& r = o.best.result;
    if (!o.confirmed) {
      md += fmt::format("| {} | {} | {} | | | | | | | {} ({}) |\n", shape_of(o.task), to_string(o.task.layout),
                        o.evaluated.empty() || o.evaluated.front().result.status != Status::compiled
                            ? "(none ok)"
                            : "(compile-only: not timed)",
                        o.evaluated.size(), o.failures);
    } else if (r.status != Status::ok) {
      md += fmt::format("| {} | {} | `{}` | confirmation {}: {} | | | | | | {} ({}) |\n", shape_of(o.task),
                        to_string(o.task.layout), o.best.name, to_string(r.status), r.reason, o.evaluated.size(),
                        o.failures);
    } else {
      md += fmt::format("| {} | {} | `{}` | {:.2f} | {:.1f} | {:.1f} | {:.3f}x | {} ({:.2f}) | {} | {} ({}) |\n",
                        shape_of(o.task), to_string(o.task.layout), o.best.name, r.cold.median_us, r.tflops,
                        100.0 * r.peak_fraction, r.speedup, r.best_baseline, r.best_baseline_us,
                        search::bottleneck(r.counters), o.evaluated.size(), o.failures);
    }
  }
  int counted = 0;
  const double g = geomean(outs, counted);
  if (counted == 0) md += "\nNo task was timed: no geometric mean.\n";
  else md += fmt::format("\nGeometric-mean speedup over {} of {} tasks: **{:.3f}x**.\n", counted, outs.size(), g);
  return md;
}

nlohmann::json outcomes_json(const std::vector<TaskOutcome>& outs, int top) {
  nlohmann::json tasks = nlohmann::json::array();
  for (const auto& o : outs) {
    nlohmann::json t{{"task", tessera::to_json(o.task)}, {"plan", o.plan}, {"evaluated", o.evaluated.size()}, {"failures", o.failures}};
    nlohmann::json best = nlohmann::json::array();
    for (int i = 0; i < int(o.evaluated.size()) && i < top; ++i)
      best.push_back({{"name", o.evaluated[i].name}, {"result", o.evaluated[i].result}});
    t["top"] = best;
    if (o.confirmed) t["confirmed"] = {{"name", o.best.name}, {"config", tile::to_json(o.best.config)}, {"result", o.best.result}};
    tasks.push_back(std::move(t));
  }
  int counted = 0;
  const double g = geomean(outs, counted);
  return {{"tasks", tasks}, {"geomean_speedup", g}, {"geomean_tasks", counted}};
}

void cmd_tune(const TuneArgs& a) {
  if (a.budget < 1) fail_bad_input("--budget must be >= 1");
  if (a.refine < 0 || a.refine >= 1) fail_bad_input("--refine must be in [0, 1)");
  std::vector<Task> tasks;
  if (!a.tasks_file.empty()) tasks = search::load_tasks_file(a.tasks_file);
  else tasks.push_back(task_of(a.tile));
  if (tasks.empty()) fail_bad_input(fmt::format("{} holds no tasks", a.tasks_file));

  const auto evaluator = evaluator_of(a.tile);
  tile::Limits limits = limits_of(a.tile);
  if (const auto dev = evaluator->device(); !dev.arch.empty()) {
    limits.arch = dev.arch;
    if (dev.smem_per_block_optin > 0) limits.smem_optin_bytes = dev.smem_per_block_optin;
    if (dev.sm_count > 0) limits.sm_count = dev.sm_count;
  }

  // The device is known once the sandbox worker has started (first evaluation).
  auto device = [&] {
    const std::string name = evaluator->device().name;
    return name.empty() ? std::string("none (compile-only)") : name;
  };
  // The report is rewritten after every task, so an interrupted tune keeps
  // the table of the tasks it finished.
  auto write_report = [&](const std::vector<TaskOutcome>& done) {
    if (!a.report.empty()) atomic_write_file(a.report, markdown_table(done, device()));
  };
  std::vector<TaskOutcome> outs;
  try {
    write_report(outs);  // an unwritable path fails now, not after the tuning
  } catch (const std::exception& e) {  // tessera::Error or std::filesystem::filesystem_error
    fail_bad_input(fmt::format("cannot write the report {}: {}", a.report, e.what()));
  }
  std::fprintf(stderr, "tune %zu task(s) for %s, budget %d each\n", tasks.size(), limits.arch.c_str(), a.budget);
  for (std::size_t i = 0; i < tasks.size(); ++i) {
    const std::string label = fmt::format("[{}/{}] {}", i + 1, tasks.size(), shape_of(tasks[i]));
    outs.push_back(TaskTuner(a, *evaluator, tasks[i], limits, label).run());
    write_report(outs);
  }
  if (a.tile.json) {
    fmt::print("{}\n", outcomes_json(outs, a.top).dump(2));
    return;
  }
  for (const auto& o : outs) {
    fmt::print("best configs for {} ({}: {} evaluated, {} failed):\n", o.task.id(), o.plan, o.evaluated.size(),
               o.failures);
    for (int i = 0; i < int(o.evaluated.size()) && i < a.top; ++i)
      print_result_line(o.evaluated[i].name, o.evaluated[i].result);
    if (o.confirmed) {
      fmt::print("re-measured with counters (bottleneck: {}):\n", search::bottleneck(o.best.result.counters));
      print_result_line(o.best.name, o.best.result);
    }
    fmt::print("\n");
  }
  if (outs.size() > 1 || !a.report.empty()) fmt::print("{}", markdown_table(outs, device()));
}

}  // namespace

void add_tune_command(CLI::App* tile) {
  auto args = std::make_shared<TuneArgs>();
  auto* tune = tile->add_subcommand("tune", "search the space through the harness (one shape or a task file)");
  add_tile_task_options(tune, args->tile);
  tune->add_option("--tasks", args->tasks_file, "task file (datasets/*.json): tune every task, then print a table");
  tune->add_option("--budget", args->budget, "configs to evaluate per task")->capture_default_str();
  tune->add_option("--seed", args->seed, "random seed (sampling when the space exceeds the budget)")->capture_default_str();
  tune->add_option("--refine", args->refine, "share of the budget for neighbours of the fastest configs")
      ->capture_default_str();
  tune->add_option("--top", args->top, "rows per task in the final listing")->capture_default_str();
  tune->add_option("--backend", args->tile.backend, "only mma_sync or wgmma_tma");
  tune->add_option("--report", args->report, "also write the summary table (Markdown) to this file");
  tune->add_flag("--counters", args->counters, "collect CUPTI counters for every config (the winner always gets them)");
  tune->add_flag("--compile-only", args->tile.compile_only, "compile and check only (no GPU needed)");
  tune->callback([args] { cmd_tune(*args); });
}

}  // namespace tessera::cli
