#include "bench/table.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "worker/baselines/baselines.hpp"
#include "core/fs.hpp"
#include "core/stats.hpp"
#include "core/table.hpp"

namespace tessera::bench {

namespace {

using baselines::kCublasLtAutotuned;
using baselines::kCublasLtHeuristic;
using baselines::kCublasNN;
using baselines::kCublasTN;

const std::vector<std::string> kBaselineOrder = {kCublasTN, kCublasNN, kCublasLtHeuristic, kCublasLtAutotuned};

// The baselines a speedup column is taken over, for a task of this layout.
std::vector<std::string> column_baselines(const std::string& column, Layout layout) {
  const std::string own = layout == Layout::TN ? "tn" : "nn";
  auto lt = [&](const char* family, const char* name) -> std::vector<std::string> {
    const std::string c = std::string(family) + "-";
    if (column == c + "max" || column == c + own) return {name};
    return {};
  };
  if (column == "cuBLAS-tn") return {kCublasTN};
  if (column == "cuBLAS-nn") return {kCublasNN};
  if (column == "cuBLAS-max") return {kCublasTN, kCublasNN};
  if (column.rfind("cuBLASLt-heuristic-", 0) == 0) return lt("cuBLASLt-heuristic", kCublasLtHeuristic);
  if (column.rfind("cuBLASLt-auto-tuning-", 0) == 0) return lt("cuBLASLt-auto-tuning", kCublasLtAutotuned);
  if (column == "baseline-max") return kBaselineOrder;
  return {};
}

std::string num(std::optional<double> v, int precision) {
  return v ? fmt::format("{:.{}f}", *v, precision) : std::string();
}

std::optional<double> find(const std::map<std::string, double>& m, const std::string& key) {
  auto it = m.find(key);
  return it == m.end() ? std::nullopt : std::optional(it->second);
}

}  // namespace

const std::vector<std::string>& baseline_names() { return kBaselineOrder; }

const std::vector<std::string>& speedup_column_names() {
  static const std::vector<std::string> names = {
      "cuBLAS-tn", "cuBLAS-nn", "cuBLAS-max", "cuBLASLt-heuristic-tn", "cuBLASLt-heuristic-nn", "cuBLASLt-heuristic-max",
      "cuBLASLt-auto-tuning-tn", "cuBLASLt-auto-tuning-nn", "cuBLASLt-auto-tuning-max", "baseline-max"};
  return names;
}

const std::vector<std::string>& max_column_names() {
  static const std::vector<std::string> names = {"cuBLAS-max", "cuBLASLt-heuristic-max", "cuBLASLt-auto-tuning-max",
                                                 "baseline-max"};
  return names;
}

std::string mnk_of(const Task& t) { return fmt::format("{}_{}_{}", t.m, t.n, t.k); }

ShapeRow shape_row(const ShapeRecord& r) {
  ShapeRow row;
  row.task = r.task;
  row.mnk = mnk_of(r.task);
  row.bucket = r.bucket;
  row.note = r.note;
  row.wall_s = r.wall_s;
  if (r.gpu >= 0) row.gpu = r.device.name.empty() ? std::to_string(r.gpu) : fmt::format("{} {}", r.gpu, r.device.name);
  for (const auto& name : kBaselineOrder)
    if (auto us = baseline_us(r, name)) {
      row.baseline_us[name] = *us;
      if (!row.best_baseline_us || *us < *row.best_baseline_us) {
        row.best_baseline = name;
        row.best_baseline_us = *us;
      }
    }
  if (!r.kernel) {
    row.status = r.note.empty() ? "baselines" : "no kernel";
    return row;
  }
  const auto& res = r.kernel->result;
  row.kernel = r.kernel->name;
  row.status = to_string(res.status);
  row.counters = res.counters;
  if (r.kernel->tune.is_object() && r.kernel->tune.contains("model")) row.model = r.kernel->tune.at("model");
  if (row.note.empty() && res.status != Status::ok) row.note = res.reason;
  row.kernel_us = kernel_us(r);
  if (!row.kernel_us) return row;
  row.kernel_tflops = r.task.tflops_at(*row.kernel_us);
  row.kernel_spread = res.cold.rel_spread;
  for (const auto& column : speedup_column_names()) {
    std::optional<double> fastest;
    for (const auto& name : column_baselines(column, r.task.layout))
      if (auto it = row.baseline_us.find(name); it != row.baseline_us.end())
        fastest = fastest ? std::min(*fastest, it->second) : it->second;
    if (fastest) row.speedup[column] = *fastest / *row.kernel_us;
  }
  return row;
}

std::vector<ShapeRow> shape_rows(const std::vector<ShapeRecord>& records) {
  std::vector<ShapeRow> rows;
  for (const auto& r : records) rows.push_back(shape_row(r));
  return rows;
}

Stat stat_of(const std::vector<double>& v) {
  Stat s;
  stats::GeometricMean geomean;
  double sum = 0;
  for (double x : v) {
    if (!(x > 0)) continue;
    s.min = s.n ? std::min(s.min, x) : x;
    s.max = s.n ? std::max(s.max, x) : x;
    ++s.n;
    geomean.add(x);
    sum += x;
    s.wins += x > 1.0;
    s.losses += x < 1.0;
  }
  if (s.n) {
    s.geomean = geomean.value();
    s.mean = sum / s.n;
  }
  return s;
}

std::vector<BucketSummary> summarize(const Run& run, const std::vector<ShapeRow>& rows) {
  std::vector<std::string> names;
  for (const auto& b : run.config.buckets) names.push_back(b.name);
  names.push_back(kAllBuckets);
  std::vector<BucketSummary> out;
  for (const auto& name : names) {
    const bool all = name == kAllBuckets;
    BucketSummary s;
    s.bucket = name;
    for (const auto& t : run.config.tasks) s.shapes += all || bucket_of(t, run.config.buckets) == name;
    std::map<std::string, std::vector<double>> speedups, tflops;
    for (const auto& row : rows) {
      if (!all && row.bucket != name) continue;
      ++s.done;
      if (row.kernel_us) ++s.kernel_ok;
      else if (row.status == to_string(Status::compiled)) ++s.kernel_compiled;
      else if (!row.kernel.empty()) ++s.kernel_failed;
      for (const auto& [column, v] : row.speedup) speedups[column].push_back(v);
      if (!row.best_baseline.empty()) ++s.fastest_baseline[row.best_baseline];
      for (const auto& [b, us] : row.baseline_us) tflops[b].push_back(row.task.tflops_at(us));
    }
    for (const auto& [column, v] : speedups) s.speedup[column] = stat_of(v);
    for (const auto& [b, v] : tflops) s.baseline_tflops[b] = stat_of(v).geomean;
    out.push_back(std::move(s));
  }
  return out;
}

namespace {

// A number of the model check, "" when the shape has none (or it is 0: no winner, not run).
std::string model_field(const nlohmann::json& model, const char* key) {
  if (!model.is_object() || !model.contains(key) || !model.at(key).is_number()) return "";
  const double v = model.at(key).get<double>();
  if (v <= 0) return "";
  return std::string(key) == "winner_rank" ? fmt::format("{}", int(v)) : fmt::format("{:.3f}", v);
}

}  // namespace

std::string shapes_csv(const std::vector<ShapeRow>& rows, const Ceiling& ceiling) {
  std::vector<std::string> headers = {"mnk", "m", "n", "k", "layout", "bucket", "gflop", "kernel", "status",
                                      "kernel_us", "kernel_tflops", "kernel_pct_of_peak", "kernel_spread",
                                      "best_baseline", "best_baseline_us", "best_baseline_tflops"};
  for (const auto& c : speedup_column_names()) headers.push_back(c);
  for (const auto& b : kBaselineOrder) headers.push_back(b + "_us");
  for (const char* h : {"model_winner_rank", "model_winner_predicted_us", "model_first_pick_predicted_us",
                        "model_first_pick_measured_us", "note", "gpu"})
    headers.push_back(h);
  Table table(std::move(headers));
  for (const auto& r : rows) {
    const auto best_tflops = r.best_baseline_us ? std::optional(r.task.tflops_at(*r.best_baseline_us)) : std::nullopt;
    const auto pct = r.kernel_tflops && ceiling.has_peak() ? std::optional(percent_of_peak(*r.kernel_tflops, ceiling))
                                                           : std::nullopt;
    std::vector<std::string> cells = {r.mnk,
                                      std::to_string(r.task.m),
                                      std::to_string(r.task.n),
                                      std::to_string(r.task.k),
                                      to_string(r.task.layout),
                                      r.bucket,
                                      fmt::format("{:.6g}", r.task.flops() / 1e9),
                                      r.kernel,
                                      r.status,
                                      num(r.kernel_us, 3),
                                      num(r.kernel_tflops, 2),
                                      num(pct, 1),
                                      r.kernel_us ? fmt::format("{:.4f}", r.kernel_spread) : "",
                                      r.best_baseline,
                                      num(r.best_baseline_us, 3),
                                      num(best_tflops, 2)};
    for (const auto& c : speedup_column_names()) cells.push_back(num(find(r.speedup, c), 3));
    for (const auto& b : kBaselineOrder) cells.push_back(num(find(r.baseline_us, b), 3));
    for (const char* key : {"winner_rank", "winner_predicted_us", "first_pick_predicted_us", "first_pick_measured_us"})
      cells.push_back(model_field(r.model, key));
    cells.push_back(r.note);
    cells.push_back(r.gpu);
    table.add_row(std::move(cells));
  }
  return to_csv(table);
}

std::string buckets_csv(const std::vector<BucketSummary>& summaries) {
  Table table({"bucket", "column", "shapes", "done", "kernel_ok", "n", "geomean", "mean", "min", "max", "wins",
               "losses"});
  for (const auto& s : summaries)
    for (const auto& c : speedup_column_names()) {
      auto it = s.speedup.find(c);
      if (it == s.speedup.end()) continue;
      const Stat& st = it->second;
      table.add_row({s.bucket, c, std::to_string(s.shapes), std::to_string(s.done), std::to_string(s.kernel_ok),
                     std::to_string(st.n), fmt::format("{:.4f}", st.geomean), fmt::format("{:.4f}", st.mean),
                     fmt::format("{:.4f}", st.min), fmt::format("{:.4f}", st.max), std::to_string(st.wins),
                     std::to_string(st.losses)});
    }
  return to_csv(table);
}

std::string buckets_markdown(const std::vector<BucketSummary>& summaries) {
  const auto& all = summaries.back();
  const bool kernels = all.kernel_ok + all.kernel_failed + all.kernel_compiled > 0;
  if (kernels) {
    std::string md;
    if (all.kernel_compiled > 0)
      md += fmt::format("Compile-only: {} kernels compiled and checked, none run or timed.\n\n", all.kernel_compiled);
    std::vector<std::string> headers = {"bucket", "shapes (done)", "kernel ok", "failed"};
    for (const auto& c : max_column_names()) headers.push_back("vs " + c + ": geomean / mean / wins");
    Table table(std::move(headers));
    for (const auto& s : summaries) {
      std::vector<std::string> cells = {s.bucket, fmt::format("{} ({})", s.shapes, s.done),
                                        std::to_string(s.kernel_ok), std::to_string(s.kernel_failed)};
      for (const auto& c : max_column_names()) {
        auto it = s.speedup.find(c);
        if (it == s.speedup.end() || it->second.n == 0) cells.push_back("-");
        else {
          const Stat& st = it->second;
          cells.push_back(fmt::format("{:.3f}x / {:.3f}x / {} of {}", st.geomean, st.mean, st.wins, st.n));
        }
      }
      table.add_row(std::move(cells));
    }
    return md + to_markdown(table);
  }
  std::vector<std::string> headers = {"bucket", "shapes (done)"};
  for (const auto& b : kBaselineOrder) headers.push_back(b + ": TFLOP/s (geomean), fastest on");
  Table table(std::move(headers));
  for (const auto& s : summaries) {
    std::vector<std::string> cells = {s.bucket, fmt::format("{} ({})", s.shapes, s.done)};
    for (const auto& b : kBaselineOrder) {
      auto t = s.baseline_tflops.find(b);
      auto f = s.fastest_baseline.find(b);
      if (t == s.baseline_tflops.end()) cells.push_back("-");
      else cells.push_back(fmt::format("{:.1f}, {}", t->second, f == s.fastest_baseline.end() ? 0 : f->second));
    }
    table.add_row(std::move(cells));
  }
  return to_markdown(table);
}

nlohmann::json summary_json(const Run& run, const std::vector<BucketSummary>& summaries, const Ceiling& ceiling) {
  nlohmann::json buckets = nlohmann::json::array();
  for (const auto& s : summaries) {
    nlohmann::json speedups = nlohmann::json::object();
    for (const auto& [c, st] : s.speedup)
      speedups[c] = {{"n", st.n}, {"geomean", st.geomean}, {"mean", st.mean}, {"min", st.min}, {"max", st.max},
                     {"wins", st.wins}, {"losses", st.losses}};
    buckets.push_back({{"bucket", s.bucket}, {"shapes", s.shapes}, {"done", s.done}, {"kernel_ok", s.kernel_ok},
                       {"kernel_failed", s.kernel_failed}, {"speedup", speedups},
                       {"fastest_baseline", s.fastest_baseline}, {"baseline_geomean_tflops", s.baseline_tflops}});
  }
  return {{"schema", "tessera.bench_summary/1"},
          {"task_set", run.config.task_set},
          {"kernels", run.config.kernels},
          {"device", run.records.empty() ? std::string() : run.records.front().device.name},
          {"ceiling",
           {{"peak_tflops", ceiling.peak_tflops}, {"peak_source", ceiling.peak_source},
            {"dram_gbps", ceiling.dram_gbps}, {"dram_source", ceiling.dram_source}}},
          {"buckets", buckets}};
}

void write_tables(const Run& run, const Ceiling& ceiling) {
  const auto rows = shape_rows(run.records);
  const auto summaries = summarize(run, rows);
  atomic_write_file(run.dir / "shapes.csv", shapes_csv(rows, ceiling));
  atomic_write_file(run.dir / "buckets.csv", buckets_csv(summaries));
  atomic_write_file(run.dir / "summary.json", summary_json(run, summaries, ceiling).dump(1) + "\n");
}

}  // namespace tessera::bench
