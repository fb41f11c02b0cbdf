// `tessera tile tune`: the tile tuner (search/tile_tuner.hpp) for one shape
// (--shape) or a task file (--tasks), with a progress bar per task, a summary
// table (Markdown, rewritten after every task) and the geometric mean.
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "bench/model_data.hpp"
#include "cli/command.hpp"
#include "cli/tile_args.hpp"
#include "core/error.hpp"
#include "core/fs.hpp"
#include "core/progress.hpp"
#include "core/stats.hpp"
#include "core/table.hpp"
#include "tile/config.hpp"
#include "tile/learned_model.hpp"
#include "search/descriptor.hpp"
#include "core/tasks_file.hpp"
#include "search/tile_tuner.hpp"

namespace tessera::cli {

namespace {

using search::TileTuneOutcome;

struct TuneArgs {
  TileArgs tile;
  std::string tasks_file;
  search::TileTuneOptions tune;
  int top = 10;
  std::string report;
  std::string rows;  // training rows of every timed config appended here (.jsonl)
};

// The best so far: a speedup when the sweep times the baselines, else the
// fastest kernel time.
std::string best_label(double best_speedup, double best_us) {
  if (best_speedup > 0) return fmt::format("best {:.3f}x", best_speedup);
  if (best_us > 0) return fmt::format("best {:.2f} us", best_us);
  return "best n/a (nothing timed)";  // compile-only, or nothing ran yet: rather than "0.000x"
}

// One task's tuning on the progress bar: "[1/3] 4096x4096x4096 12/64 configs | best 1.031x".
class TaskProgress {
public:
  explicit TaskProgress(std::string label) : label_(std::move(label)) {}
  void update(int done, int total, double best_speedup, double best_us) {
    fraction_ = total > 0 ? double(done) / total : 1.0;
    text_ = fmt::format("{} {}/{} configs | {}", label_, done, total, best_label(best_speedup, best_us));
    bar_.update(fraction_, text_);
  }
  void finish() { bar_.finish(fraction_, text_.empty() ? label_ : text_); }

private:
  std::string label_, text_;
  double fraction_ = 0;
  ProgressBar bar_{"tune"};
};

// With the epilogue when there is one: a task file may hold one shape twice, plain and fused.
std::string shape_of(const Task& t) {
  const std::string mnk = fmt::format("{}x{}x{}", t.m, t.n, t.k);
  return t.epilogue == Epilogue::none ? mnk : mnk + " " + to_string(t.epilogue);
}

// Geometric mean of the confirmed speedups; tasks without one are left out
// (and counted in the table's footer).
stats::GeometricMean geomean(const std::vector<TileTuneOutcome>& outs) {
  stats::GeometricMean g;
  for (const auto& o : outs)
    if (o.confirmed() && o.best().result.status == Status::ok && o.best().result.speedup > 0)
      g.add(o.best().result.speedup);
  return g;
}

// The cost model against the sweep: its first pick predicted / measured, and
// the winner's rank in its order with its predicted / measured time.
std::vector<std::string> model_cells(const search::ModelCheck& m, bool timed) {
  if (!m.ranked) return {"", ""};
  const std::string none = timed ? "failed" : "not timed";  // compile-only sweeps measure nothing
  const auto us = [&](double v) { return v > 0 ? fmt::format("{:.2f}", v) : none; };
  const std::string first = fmt::format("{} / {}", us(m.first_pick_predicted_us), us(m.first_pick_measured_us));
  if (m.winner_rank == 0) return {first, ""};
  return {first, fmt::format("{} ({} / {})", m.winner_rank, us(m.winner_predicted_us), us(m.winner_measured_us))};
}

// One task's row: the winner's figures when it was confirmed and ran, else
// why there are none.
std::vector<std::string> outcome_cells(const TileTuneOutcome& o) {
  const bool timed = o.evaluated.empty() || o.evaluated.front().result.status != Status::compiled;
  std::vector<std::string> cells = {shape_of(o.task), to_string(o.task.layout)};
  if (!o.confirmed()) {
    cells.insert(cells.end(), {timed ? "(none ok)" : "(compile-only: not timed)", "", "", "", "", "", ""});
  } else if (const auto& r = o.best().result; r.status != Status::ok) {
    cells.insert(cells.end(), {fmt::format("`{}`", o.best().name),
                               fmt::format("confirmation {}: {}", to_string(r.status), r.reason), "", "", "", "", ""});
  } else {
    cells.insert(cells.end(), {fmt::format("`{}`", o.best().name), fmt::format("{:.2f}", r.cold.median_us),
                               fmt::format("{:.1f}", r.tflops), fmt::format("{:.1f}", 100.0 * r.peak_fraction),
                               fmt::format("{:.3f}x", r.speedup),
                               fmt::format("{} ({:.2f})", r.best_baseline, r.best_baseline_us),
                               search::bottleneck(r.counters)});
  }
  cells.push_back(fmt::format("{} ({})", o.evaluated.size(), o.failures));
  for (auto& c : model_cells(o.model, timed)) cells.push_back(std::move(c));
  return cells;
}

std::string markdown_table(const std::vector<TileTuneOutcome>& outs, const std::string& device) {
  std::string md = fmt::format(
      "Device: {}. Cold-L2 kernel GPU time (CUPTI), the winner re-measured once after the sweep; speedup = best "
      "cuBLAS/cuBLASLt baseline / kernel, both from that same run. Model: the cost model's first pick, predicted / "
      "measured µs (sweep), and the winner's rank in the model's order (predicted / measured µs).\n\n",
      device);
  Table table({"shape", "layout", "best config", "µs", "TFLOP/s", "% of peak", "speedup", "best baseline (µs)",
               "bottleneck", "evaluated (failed)", "model #1 µs", "winner's model rank"});
  for (const auto& o : outs) table.add_row(outcome_cells(o));
  md += to_markdown(table);
  const auto g = geomean(outs);
  if (g.count() == 0) md += "\nNo task was timed: no geometric mean.\n";
  else
    md += fmt::format("\nGeometric-mean speedup over {} of {} tasks: **{:.3f}x**.\n", g.count(), outs.size(),
                      g.value());
  return md;
}

nlohmann::json outcomes_json(const std::vector<TileTuneOutcome>& outs, int top) {
  nlohmann::json tasks = nlohmann::json::array();
  for (const auto& o : outs) {
    nlohmann::json t{{"task", tessera::to_json(o.task)}, {"plan", o.plan}, {"evaluated", o.evaluated.size()}, {"failures", o.failures}};
    nlohmann::json best = nlohmann::json::array();
    for (int i = 0; i < int(o.evaluated.size()) && i < top; ++i)
      best.push_back({{"name", o.evaluated[i].name}, {"move", o.evaluated[i].move}, {"order", o.evaluated[i].order},
                      {"result", o.evaluated[i].result}});
    t["top"] = best;
    if (o.model.ranked) t["model"] = search::to_json(o.model);
    if (o.confirmed())
      t["confirmed"] = {{"name", o.best().name},
                        {"move", o.best().move},
                        {"config", tile::to_json(o.best().config)},
                        {"result", o.best().result}};
    nlohmann::json again = nlohmann::json::array();
    for (const auto& c : o.confirmations) again.push_back({{"name", c.name}, {"result", c.result}});
    t["confirmations"] = again;
    tasks.push_back(std::move(t));
  }
  const auto g = geomean(outs);
  return {{"tasks", tasks}, {"geomean_speedup", g.value()}, {"geomean_tasks", g.count()}};
}

void cmd_tune(const TuneArgs& a) {
  if (a.tune.budget < 1) fail_bad_input("--budget-evals must be >= 1");
  if (a.tune.refine < 0 || a.tune.refine >= 1) fail_bad_input("--refine must be in [0, 1)");
  if (a.tune.confirm_top < 1) fail_bad_input("--confirm must be >= 1 (the winner is always re-measured)");
  if (!a.rows.empty()) {
    bench::check_rows_file_name(a.rows, "--rows");
    if (!std::ofstream(a.rows, std::ios::app))  // before any work, as the report is
      fail_bad_input(fmt::format("--rows {}: cannot be written", a.rows));
  }
  search::TileTuneOptions options = a.tune;
  options.backend = a.tile.backend;
  options.compile_only = compile_only(a.tile);
  search::check_backend(options.backend);  // before any work
  std::vector<Task> tasks;
  if (!a.tasks_file.empty()) tasks = load_tasks_file(a.tasks_file);
  else tasks.push_back(task_of(a.tile));
  if (tasks.empty()) fail_bad_input(fmt::format("{} holds no tasks", a.tasks_file));

  const auto evaluator = evaluator_of(a.tile);
  evaluator->start();  // the worker reports the device: its limits shape the space of the first task too
  const tile::Limits limits = tile::with_device(limits_of(a.tile), evaluator->device());

  // Empty in compile-only mode (no worker, no GPU).
  auto device = [&] {
    const std::string name = evaluator->device().name;
    return name.empty() ? std::string("none (compile-only)") : name;
  };
  // The report is rewritten after every task, so an interrupted tune keeps
  // the table of the tasks it finished.
  auto write_report = [&](const std::vector<TileTuneOutcome>& done) {
    if (!a.report.empty()) atomic_write_file(a.report, markdown_table(done, device()));
  };
  std::vector<TileTuneOutcome> outs;
  try {
    write_report(outs);  // an unwritable path fails now, not after the tuning
  } catch (const std::exception& e) {  // tessera::Error or std::filesystem::filesystem_error
    fail_bad_input(fmt::format("cannot write the report {}: {}", a.report, e.what()));
  }
  // Rows are appended after every task (an interrupted tune keeps those of the
  // tasks it finished), so several tunes can grow one file.
  int rows_written = 0;
  auto append_rows = [&](const TileTuneOutcome& o) {
    if (a.rows.empty()) return;
    for (const auto& m : search::tune_rows(o, limits, tile::device_kind(evaluator->device().name))) {
      append_line_durable(a.rows, tile::to_json(m).dump());
      ++rows_written;
    }
  };
  std::fprintf(stderr, "tune %zu task(s) for %s on %s (%d SMs, %d B smem per block), budget %d each\n", tasks.size(),
               limits.arch.c_str(), device().c_str(), limits.sm_count, limits.smem_optin_bytes, a.tune.budget);
  for (std::size_t i = 0; i < tasks.size(); ++i) {
    TaskProgress progress(fmt::format("[{}/{}] {}", i + 1, tasks.size(), shape_of(tasks[i])));
    outs.push_back(search::tune_tile(*evaluator, tasks[i], limits, options,
                                     [&](int done, int total, double best_speedup, double best_us) {
                                       progress.update(done, total, best_speedup, best_us);
                                     }));
    progress.finish();
    write_report(outs);
    append_rows(outs.back());
  }
  if (!a.rows.empty())
    std::fprintf(stderr, "%d training rows appended to %s%s\n", rows_written, a.rows.c_str(),
                 rows_written ? " (tessera tile model train|eval read it)" : " (nothing was timed)");
  if (a.tile.json) {
    fmt::print("{}\n", outcomes_json(outs, a.top).dump(2));
    return;
  }
  for (const auto& o : outs) {
    fmt::print("best configs for {} ({}: {} evaluated, {} failed):\n", o.task.id(), o.plan, o.evaluated.size(),
               o.failures);
    for (int i = 0; i < int(o.evaluated.size()) && i < a.top; ++i)
      print_result_line(o.evaluated[i].name, o.evaluated[i].result);
    if (o.model.ranked) {
      const auto& m = o.model;
      fmt::print("cost model: first pick {} predicted {:.2f} µs, measured {}; {} of the configs from its order",
                 m.first_pick, m.first_pick_predicted_us,
                 m.first_pick_measured_us > 0 ? fmt::format("{:.2f} µs", m.first_pick_measured_us) : "not ok",
                 m.from_model);
      if (m.winner_rank > 0)
        fmt::print("; the winner is its #{} (predicted {:.2f} µs, measured {:.2f} µs)", m.winner_rank,
                   m.winner_predicted_us, m.winner_measured_us);
      fmt::print("\n");
    }
    if (o.confirmed()) {
      fmt::print("the fastest {} re-measured with the baselines interleaved and counters (winner's bottleneck: {}):\n",
                 o.confirmations.size(), search::bottleneck(o.best().result.counters));
      for (const auto& c : o.confirmations) print_result_line(c.name, c.result);
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
  // --budget-evals as `tessera search` spells it; --budget, the older spelling, is the same option.
  tune->add_option("--budget-evals,--budget", args->tune.budget, "configs to evaluate per task")->capture_default_str();
  tune->add_option("--seed", args->tune.seed, "random seed (sampling when the space exceeds the budget)")->capture_default_str();
  tune->add_option("--refine", args->tune.refine, "share of the budget for neighbours of the fastest configs")
      ->capture_default_str();
  tune->add_option("--top", args->top, "rows per task in the final listing")->capture_default_str();
  tune->add_option("--backend", args->tile.backend, "only mma_sync or wgmma_tma");
  tune->add_option("--report", args->report, "also write the summary table (Markdown) to this file");
  tune->add_option("--rows", args->rows,
                   "append every timed config as a cost-model training row to this .jsonl file (tile model train "
                   "reads it)");
  tune->add_flag("--counters", args->tune.counters, "collect CUPTI counters for every config (the winner always gets them)");
  tune->add_option("--confirm", args->tune.confirm_top,
                   "re-measure this many of the fastest configs with the baselines and counters (the winner is the "
                   "sweep's fastest)")
      ->capture_default_str();
  tune->add_flag("--sweep-baselines", args->tune.sweep_baselines,
                 "time the cuBLAS/cuBLASLt baselines with every config, not only with the winner's confirmation");
  add_mode_options(tune, args->tile.sandbox);
  tune->callback([args] { cmd_tune(*args); });
}

}  // namespace tessera::cli
