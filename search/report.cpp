#include "search/report.hpp"

#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/format.h>

#include "agent/proposer.hpp"
#include "core/error.hpp"
#include "core/fs.hpp"
#include "core/json_read.hpp"
#include "core/table.hpp"
#include "search/descriptor.hpp"
#include "search/run_files.hpp"
#include "search/svg.hpp"
#include "search/trajectory.hpp"

namespace tessera::search {

namespace fs = std::filesystem;

namespace {

double tflops_of(const Task& t, double us) { return us > 0 ? t.tflops_at(us) : 0; }

void baseline_tflops(TaskView& tv) {
  if (!tv.best.is_object() || !tv.best["eval"].is_object()) return;
  double cublas_us = 0;
  const nlohmann::json baselines = tv.best["eval"].value("baselines", nlohmann::json::array());
  for (const auto& b : baselines) {
    const std::string name = b.value("name", std::string());
    const double us = b.contains("cold") ? b["cold"].value("median_us", 0.0) : 0.0;
    if (us <= 0 || !b.value("error", std::string()).empty()) continue;
    if (name == "cublaslt_autotuned") tv.cublaslt_autotuned_tflops = tflops_of(tv.task, us);
    if (name.rfind("cublas_", 0) == 0 && (cublas_us == 0 || us < cublas_us)) cublas_us = us;
  }
  tv.cublas_tflops = tflops_of(tv.task, cublas_us);
}

std::string join(const std::vector<std::string>& v, const std::string& sep) {
  std::string out;
  for (std::size_t i = 0; i < v.size(); ++i) out += (i ? sep : "") + v[i];
  return out;
}

// One row per proposer and model arm (an ensemble's members apart).
struct ArmRow {
  long long steps = 0, failed = 0, repeats = 0, valid = 0, tokens = 0;
  double cost = 0, best = 0;
};

std::string proposers_table(const std::vector<nlohmann::json>& records) {
  std::map<std::pair<std::string, std::string>, ArmRow> rows;
  for (nlohmann::json r : records) {  // a copy: operator[] on absent keys must not be const
    const nlohmann::json plan = r.value("plan", nlohmann::json::object());
    const nlohmann::json proposer = r.value("proposer", nlohmann::json::object());
    std::string model = plan.value("model", std::string());
    if (model.empty()) model = proposer.value("model", std::string());
    ArmRow& row = rows[{proposer.value("name", std::string()), model}];
    ++row.steps;
    row.failed += r.value("proposal_ok", true) ? 0 : 1;
    row.repeats += (long long)r.value("novelty_rejects", nlohmann::json::array()).size();
    row.valid += r.value("reward", nlohmann::json::object()).value("valid", false) ? 1 : 0;
    const nlohmann::json usage = r.value("usage", nlohmann::json::object());
    row.tokens = agent::add_tokens(row.tokens, agent::total_tokens(usage.get<agent::Usage>()));
    row.cost += usage.value("cost_usd", 0.0);
    if (r.value("reward", nlohmann::json::object()).value("timed", false))
      row.best = std::max(row.best, r["eval"].value("speedup", 0.0));
  }
  Table table({"proposer", "model", "steps", "no proposal", "repeats", "valid kernels", "best speedup", "tokens",
               "cost"});
  for (const auto& [key, row] : rows)
    table.add_row({key.first, key.second.empty() ? "-" : key.second, std::to_string(row.steps),
                   std::to_string(row.failed), std::to_string(row.repeats), std::to_string(row.valid),
                   row.best > 0 ? fmt::format("{:.3f}x", row.best) : "-", std::to_string(row.tokens),
                   fmt::format("${:.4f}", row.cost)});
  return "## Proposers and models\n\n" + to_markdown(table) + "\n";
}

}  // namespace

RunView load_run(const fs::path& run_dir) {
  RunView run;
  run.dir = run_dir;
  run.config = load_run_config(run_dir);
  run.records = read_jsonl(trajectories_path(run_dir));
  std::map<std::string, std::size_t> index;
  for (const auto& t : run.config.tasks) {
    index[t.id()] = run.tasks.size();
    TaskView tv;
    tv.task = t;
    tv.id = t.id();
    run.tasks.push_back(tv);
  }
  run.compile_only = true;
  for (nlohmann::json r : run.records) {  // a copy: operator[] on absent keys must not be const
    auto it = index.find(r.value("task_id", std::string()));
    if (it == index.end()) continue;
    TaskView& tv = run.tasks[it->second];
    ++tv.steps;
    if (r.value("evaluated", false)) tv.evaluations += r["first_eval"].is_object() ? 2 : 1;
    const nlohmann::json acc = r.value("acceptance", nlohmann::json::object());
    if (r.value("reward", nlohmann::json::object()).value("timed", false)) run.compile_only = false;
    if (acc.contains("best") && acc["best"].value("accepted", false)) {
      tv.best = r;
      tv.best_speedup = r["eval"].value("speedup", 0.0);
      tv.best_tflops = r["eval"].value("tflops", 0.0);
      tv.best_median_us = r["eval"]["cold"].value("median_us", 0.0);
    }
    if (acc.contains("archive") && acc["archive"].value("accepted", false) && r["descriptor"].is_object()) {
      const auto& d = r["descriptor"];
      CellView c;
      c.structure = d.value("tile_class", std::string("unknown")) + "/s" + std::to_string(integer_or(d, "stages", 0));
      c.behaviour = d.value("occupancy", std::string("unknown")) + "/" + d.value("bottleneck", std::string("unknown"));
      c.speedup = r["eval"].value("speedup", 0.0);
      c.step = integer_value<long long>(r, "step", -1);
      tv.cells[d.value("key", c.structure + "|" + c.behaviour)] = c;
    }
    tv.curve_x.push_back(double(tv.evaluations));
    tv.curve_y.push_back(tv.best_speedup);
    run.totals = r.value("totals", nlohmann::json::object());
    run.geo_x.push_back(run.totals.value("evaluations", 0.0));
    run.geo_y.push_back(run.totals.value("best_speedup", 0.0));
  }
  for (auto& tv : run.tasks) {
    baseline_tflops(tv);
    for (std::size_t i = 0; i < tv.curve_y.size(); ++i)
      if (tv.best_speedup > 0 && tv.curve_y[i] >= kNearBestFraction * tv.best_speedup) {
        tv.evals_to_near_best = (long long)tv.curve_x[i];
        break;
      }
  }
  if (run.records.empty()) run.compile_only = run.config.config.compile_only;
  return run;
}

namespace {

struct MoveRow {
  long long steps = 0, explored = 0, gave_way = 0, timed = 0, new_best = 0;
  double best = 0;
};

struct TileMoves {
  std::map<std::string, MoveRow> rows;  // by kind of move
  long long steps = 0, explored = 0;
};

// Fields read leniently (core/json_read.hpp): a run written by another
// version still gets its report.
TileMoves tile_moves(const std::vector<nlohmann::json>& records) {
  TileMoves t;
  for (const auto& r : records) {
    const nlohmann::json& info = field_or_null(r, "proposer_info");
    const std::string move = string_or(info, "move", "");
    if (string_or(r, "proposer_name", "") != "tile" || move.empty()) continue;
    const nlohmann::json& reward = field_or_null(r, "reward");
    MoveRow& row = t.rows[move];
    ++t.steps;
    ++row.steps;
    const bool explore = bool_or(info, "explore", false);
    t.explored += explore;
    row.explored += explore;
    // The move that gave way is the one the pool was drawn for; the step itself is the model's.
    if (const auto& gave = field_or_null(info, "far_slower"); gave.is_object()) ++t.rows[string_or(gave, "kind", "?")].gave_way;
    if (bool_or(reward, "timed", false)) {
      ++row.timed;
      row.new_best += bool_or(reward, "new_best", false);
      row.best = std::max(row.best, number_or(reward, "speedup_vs_baseline", 0.0));
    }
  }
  return t;
}

}  // namespace

std::string tile_moves_section(const std::vector<nlohmann::json>& records) {
  const TileMoves t = tile_moves(records);
  if (t.steps == 0) return {};
  Table table({"move", "steps", "explored", "gave way to the model", "timed", "new best", "best speedup"});
  for (const auto& [kind, row] : t.rows)
    table.add_row({kind, std::to_string(row.steps), std::to_string(row.explored), std::to_string(row.gave_way),
                   std::to_string(row.timed), std::to_string(row.new_best),
                   row.best > 0 ? fmt::format("{:.3f}x", row.best) : "-"});
  return "## Tile moves\n\n" + to_markdown(table) +
         fmt::format("\n{} of the tile proposer's {} steps were counted exploration (a random member of the move's "
                     "pool instead of its fastest predicted). A move whose best was predicted far slower than the "
                     "incumbent gave way to the model's next pick (docs/tile.md, \"Tile proposer\").\n\n",
                     t.explored, t.steps);
}

fs::path write_report(const RunView& run) {
  const fs::path plots = run.dir / "plots";
  fs::create_directories(plots);
  const auto& cfg = run.config.config;

  // Best speedup vs evaluations.
  std::vector<svg::Series> series;
  if (run.tasks.size() <= std::size_t(kMaxPerTaskCurves))
    for (const auto& t : run.tasks) series.push_back({t.task.shape() + " " + to_string(t.task.layout), t.curve_x, t.curve_y});
  if (run.tasks.size() > 1) series.push_back({"geomean", run.geo_x, run.geo_y});
  atomic_write_file(plots / "best_vs_evals.svg",
                    svg::line_chart("Best speedup over the best baseline vs evaluations",
                                    run.tasks.size() > std::size_t(kMaxPerTaskCurves) ? "evaluations (all tasks)"
                                                                                      : "evaluations (per task)",
                                    "speedup (x)", series, 1.0));
  // Speedup per shape.
  std::vector<std::string> labels;
  std::vector<double> values;
  for (const auto& t : run.tasks) {
    labels.push_back(t.task.shape());
    values.push_back(t.best_speedup);
  }
  atomic_write_file(plots / "speedup_per_shape.svg",
                    svg::bar_chart("Best kernel speedup per shape (1.0 = best of cuBLAS/cuBLASLt)", "speedup (x)",
                                   labels, values, 1.0));
  // MAP-Elites archive heatmaps: rows = structure (tile class/stages), columns = behaviour (occupancy/bottleneck).
  std::vector<std::string> heatmaps;
  for (std::size_t i = 0; i < run.tasks.size() && int(i) < kMaxHeatmaps; ++i) {
    const auto& t = run.tasks[i];
    std::vector<std::string> rows, cols;
    for (const auto& r : structure_bins())
      if (std::any_of(t.cells.begin(), t.cells.end(), [&](const auto& c) { return c.second.structure == r; }))
        rows.push_back(r);
    for (const auto& c : behaviour_bins())
      if (std::any_of(t.cells.begin(), t.cells.end(), [&](const auto& x) { return x.second.behaviour == c; }))
        cols.push_back(c);
    std::vector<std::vector<std::optional<double>>> v(rows.size(), std::vector<std::optional<double>>(cols.size()));
    for (const auto& [key, cell] : t.cells) {
      const auto r = std::find(rows.begin(), rows.end(), cell.structure) - rows.begin();
      const auto c = std::find(cols.begin(), cols.end(), cell.behaviour) - cols.begin();
      if (r < long(rows.size()) && c < long(cols.size())) v[r][c] = cell.speedup;
    }
    const std::string name = fmt::format("archive_{}.svg", i);
    atomic_write_file(plots / name,
                      svg::heatmap("MAP-Elites archive, " + t.id + " (cell value: elite speedup)", rows, cols, v));
    heatmaps.push_back(name);
  }

  std::string md = fmt::format("# tessera search report: {}\n\n", cfg.run_id);
  md += fmt::format("Method **{}**, seed {}, proposers {}, {} task(s). ", cfg.method, cfg.seed,
                    join(cfg.proposers, ", "), run.tasks.size());
  md += fmt::format("{} steps, {} evaluations ({} re-measured), {} tokens, ${:.4f}.\n\n",
                    integer_or(run.totals, "steps", 0), integer_or(run.totals, "evaluations", 0),
                    integer_or(run.totals, "remeasured", 0), integer_or(run.totals, "tokens", 0),
                    run.totals.value("cost_usd", 0.0));
  if (run.compile_only)
    md += "**Compile-only run: no kernel was verified or timed on a GPU; no speedup is claimed.**\n\n";
  md += "## Best kernel per task\n\n";
  Table best({"task", "best speedup", "TFLOP/s", "cuBLAS TFLOP/s", "cuBLASLt autotuned TFLOP/s", "cold median (us)",
              "best at step", "evaluations", "evals to 98% of best", "kernel"});
  for (const auto& t : run.tasks) {
    const bool has = t.best.is_object();
    best.add_row({t.id, has ? fmt::format("{:.3f}x", t.best_speedup) : "-",
                  has ? fmt::format("{:.1f}", t.best_tflops) : "-",
                  t.cublas_tflops > 0 ? fmt::format("{:.1f}", t.cublas_tflops) : "-",
                  t.cublaslt_autotuned_tflops > 0 ? fmt::format("{:.1f}", t.cublaslt_autotuned_tflops) : "-",
                  has ? fmt::format("{:.2f}", t.best_median_us) : "-",
                  has ? std::to_string(integer_value<long long>(t.best, "step", -1)) : "-",
                  std::to_string(t.evaluations),
                  t.evals_to_near_best >= 0 ? std::to_string(t.evals_to_near_best) : "-",
                  has ? fmt::format("[best/{0}.cu](best/{0}.cu)", t.id) : "-"});
  }
  md += to_markdown(best);
  md += "\nSpeedups are cold-L2 kernel GPU time of the best baseline divided by the kernel's, both measured in the "
        "same run, interleaved (docs/search.md). Kernels replace incumbents only when faster beyond the "
        "measurement spread.\n\n";
  md += "## Plots\n\n![best speedup vs evaluations](plots/best_vs_evals.svg)\n\n"
        "![speedup per shape](plots/speedup_per_shape.svg)\n\n";
  for (const auto& h : heatmaps) md += fmt::format("![MAP-Elites archive](plots/{})\n\n", h);
  md += "Archive rows: block-tile size class (S <= 64x64, M <= 128x128, L larger) / pipeline stages; columns: "
        "achieved occupancy bucket / bottleneck from the CUPTI counters (memory, tensor, latency).\n\n";
  Table outcomes({"status", "steps"});
  const nlohmann::json by_status = run.totals.value("by_status", nlohmann::json::object());
  for (const auto& [status, n] : by_status.items()) outcomes.add_row({status, n.is_number_integer() ? std::to_string(n.get<long long>()) : n.dump()});
  outcomes.add_row({"duplicate (not evaluated)", std::to_string(integer_or(run.totals, "duplicates", 0))});
  outcomes.add_row({"no proposal", std::to_string(integer_or(run.totals, "proposal_failures", 0))});
  md += "## Outcomes\n\n" + to_markdown(outcomes) + "\n";
  md += fmt::format("{} proposal(s) repeated a kernel that was already evaluated and were asked again.\n\n",
                    integer_or(run.totals, "repeated_proposals", 0));
  md += fmt::format("Noise-aware acceptance changed {} decision(s) compared with a plain median comparison.\n\n",
                    integer_or(run.totals, "noise_changed_decisions", 0));
  md += proposers_table(run.records);
  md += tile_moves_section(run.records);
  const fs::path state = run.dir / "state.json";
  if (fs::exists(state)) {
    const auto st = nlohmann::json::parse(read_file(state), nullptr, false);
    if (!st.is_discarded() && st.contains("method") && st["method"].contains("arms")) {
      Table arms({"arm", "target", "pulls", "mean reward"});
      for (const auto& a : st["method"]["arms"]) {
        const long long pulls = a.value("pulls", 0LL);
        arms.add_row({a.value("arm", std::string()), a.value("target", std::string()), std::to_string(pulls),
                      fmt::format("{:.3f}", pulls ? a.value("reward_sum", 0.0) / double(pulls) : 0.0)});
      }
      md += fmt::format("## Bandit arms ({})\n\n", st["method"].value("rule", std::string())) + to_markdown(arms) + "\n";
    }
  }
  md += "Files: `config.json`, `trajectories.jsonl` (docs/trajectory-schema.md), `outcomes.jsonl`, `state.json`, "
        "`best/`, `plots/`.\n";
  const fs::path out = run.dir / "report.md";
  atomic_write_file(out, md);
  return out;
}

std::string final_summary(const RunView& run) {
  std::string s;
  for (const auto& t : run.tasks) {
    if (!t.best.is_object()) {
      s += fmt::format("{}: no timed kernel{}\n", t.id, run.compile_only ? " (compile-only: nothing was measured)" : "");
      continue;
    }
    s += fmt::format("{}: best {:.1f} TFLOP/s ({:.3f}x the best baseline) | cuBLAS {} TFLOP/s | cuBLASLt autotuned {} "
                     "TFLOP/s | step {}, {} evaluations\n",
                     t.id, t.best_tflops, t.best_speedup,
                     t.cublas_tflops > 0 ? fmt::format("{:.1f}", t.cublas_tflops) : "n/a",
                     t.cublaslt_autotuned_tflops > 0 ? fmt::format("{:.1f}", t.cublaslt_autotuned_tflops) : "n/a",
                     integer_value<long long>(t.best, "step", -1), t.evaluations);
  }
  // A lent baseline was timed beside another kernel, the candidates without
  // cuBLAS just before them: on the H200 such a speedup ran 0.2-0.25% above an
  // interleaved one of the same kernel (docs/search.md).
  if (run.config.config.reuse_baselines && !run.compile_only)
    s += "baselines timed on each task's first evaluation and lent to the rest (--reuse-baselines): these speedups run "
         "a little above an interleaved measurement; tessera eval times a kernel beside them\n";
  // What the tile proposer's steps were (report.md has the table).
  const TileMoves t = tile_moves(run.records);
  if (t.steps > 0) {
    std::vector<std::string> kinds;
    for (const auto& [kind, row] : t.rows)
      if (row.steps > 0) kinds.push_back(fmt::format("{} {}", kind, row.steps));
    s += fmt::format("tile moves: {}; {} explored\n", join(kinds, ", "), t.explored);
  }
  return s;
}

}  // namespace tessera::search
