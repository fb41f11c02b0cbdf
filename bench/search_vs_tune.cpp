#include "bench/search_vs_tune.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <type_traits>
#include <utility>

#include <fmt/format.h>

#include "bench/model_eval.hpp"
#include "core/fs.hpp"
#include "core/json_read.hpp"
#include "core/stats.hpp"
#include "search/svg.hpp"

namespace tessera::bench {

namespace {

// Best-so-far speedup after each config of a sweep, ending at the shape's
// `confirmed` speedup: each point is the sweep's best so far as a share of its
// final best, times that figure. A sweep times its kernels one after another
// with no baseline between them, the confirmation interleaves them with the
// baselines: on a power-capped shape (an H200 at 12288x8192x16384) the sweep's
// clock ran about 12% above the confirmation's, and the sweep's times against
// the confirmation's baselines ended at 1.115x for a confirmed 0.977x. The
// sweep's own ratios (how much faster its best became) are kept; its clock is not.
std::vector<double> curve(const nlohmann::json& sweep, double confirmed) {
  std::vector<double> best_us;  // best so far, 0 before the first timed config
  if (!sweep.is_array()) return best_us;
  for (const auto& e : sweep) {
    const double us = number_or(e, "cold_us", 0.0), prev = best_us.empty() ? 0.0 : best_us.back();
    best_us.push_back(us > 0 && (prev == 0 || us < prev) ? us : prev);
  }
  const double final_us = best_us.empty() ? 0.0 : best_us.back();
  for (double& x : best_us) x = x > 0 && confirmed > 0 ? confirmed * final_us / x : 0;
  return best_us;
}

// The geometric mean of the positive values (a shape without a figure is
// left out); 0 for none.
double geomean(const std::vector<double>& v) {
  stats::GeometricMean g;
  for (double x : v)
    if (x > 0) g.add(x);
  return g.value();
}

// Per evaluation index, the geometric mean over shapes of their curves (a
// shorter curve holds its last value).
std::vector<double> mean_curve(const std::vector<std::vector<double>>& curves) {
  std::size_t len = 0;
  for (const auto& c : curves) len = std::max(len, c.size());
  std::vector<double> out;
  for (std::size_t i = 0; i < len; ++i) {
    std::vector<double> at;
    for (const auto& c : curves)
      if (!c.empty()) at.push_back(c[std::min(i, c.size() - 1)]);
    out.push_back(geomean(at));
  }
  return out;
}

// The name of a sweep's first config ("" when it has none).
std::string first_name(const nlohmann::json& sweep) {
  return sweep.is_array() && !sweep.empty() ? string_or(sweep.front(), "name", "") : std::string{};
}

// The fastest timed config of a sweep: its name, move and cold time ("" and 0
// when the sweep has none; the move "" when the sweep does not say).
struct Fastest {
  std::string name, move;
  double us = 0;
};
Fastest fastest(const nlohmann::json& sweep) {
  Fastest best;
  if (!sweep.is_array()) return best;
  for (const auto& e : sweep) {
    const double us = number_or(e, "cold_us", 0.0);
    if (us <= 0 || string_or(e, "status", "") != "ok" || (best.us > 0 && us >= best.us)) continue;
    best = {string_or(e, "name", ""), string_or(e, "move", ""), us};
  }
  return best;
}

// A sweep's first config's cold time over `best` (its fastest); 0 when the
// first was not timed (failed) or nothing was.
double first_over(const nlohmann::json& sweep, const Fastest& best) {
  if (!sweep.is_array() || sweep.empty() || best.us <= 0) return 0;
  const double first = number_or(sweep.front(), "cold_us", 0.0);
  return first > 0 && string_or(sweep.front(), "status", "") == "ok" ? first / best.us : 0;
}

// Whether a sweep timed the config called `name`.
bool timed(const nlohmann::json& sweep, const std::string& name) {
  if (!sweep.is_array() || name.empty()) return false;
  return std::any_of(sweep.begin(), sweep.end(), [&](const nlohmann::json& e) {
    return number_or(e, "cold_us", 0.0) > 0 && string_or(e, "name", "") == name;
  });
}

// For each config of the search's sweep that the tune's timed too, the
// search's cold time over the tune's: into the record's first ratios for the
// sweep's first config, its later ones for the rest; and, with enough of
// them, the rank correlation of the two timings into its repeat_rho.
void timed_by_both(const nlohmann::json& search, const nlohmann::json& tune, SearchVsTune& v) {
  if (!search.is_array() || !tune.is_array()) return;
  std::map<std::string, double> tune_us;
  for (const auto& e : tune)
    if (const double us = number_or(e, "cold_us", 0.0); us > 0) tune_us.emplace(string_or(e, "name", ""), us);
  std::vector<double> search_times, tune_times;
  bool is_first = true;
  for (const auto& e : search) {
    const double us = number_or(e, "cold_us", 0.0);
    const auto it = tune_us.find(string_or(e, "name", ""));
    if (us > 0 && it != tune_us.end()) {
      (is_first ? v.first_ratio : v.later_ratio).push_back(us / it->second);
      search_times.push_back(us);
      tune_times.push_back(it->second);
    }
    is_first = false;
  }
  if (search_times.size() >= kRepeatMinConfigs) v.repeat_rho.push_back(stats::spearman(search_times, tune_times));
}

// Rows of M for the per-M table, as (smallest M of the row, its label): each
// M when a set has few (an LLM set's token counts), else ranges by powers of
// four, so that a grid's M do not give a row per shape.
std::pair<long long, std::string> m_group(long long m, std::size_t distinct) {
  if (distinct <= 12) return {m, fmt::format("{}", m)};
  long long lo = 1, hi = 1;
  while (hi < m) lo = hi + 1, hi *= 4;
  return {lo, lo == hi ? fmt::format("{}", lo) : fmt::format("{}-{}", lo, hi)};
}

// Both geometric means per group of shapes, a row each in the order of the
// groups' keys; `group` gives a shape's (key, label).
template <class Group>
std::string means_table(const std::string& column, const std::vector<ShapeVersus>& shapes, Group group) {
  std::map<std::invoke_result_t<Group, const ShapeVersus&>, std::pair<std::vector<double>, std::vector<double>>> by;
  for (const auto& s : shapes) {
    auto& p = by[group(s)];
    p.first.push_back(s.search);
    p.second.push_back(s.tile);
  }
  std::string md = fmt::format("| {} | shapes | search | tune |\n|---|---|---|---|\n", column);
  for (const auto& [g, p] : by)
    md += fmt::format("| {} | {} | {:.3f}x | {:.3f}x |\n", g.second, p.first.size(), geomean(p.first), geomean(p.second));
  return md;
}

// Evaluation counts at which the curves are printed: 1, 2, 4, ... and the last.
std::vector<std::size_t> checkpoints(std::size_t len) {
  std::vector<std::size_t> at;
  for (std::size_t i = 1; i < len; i *= 2) at.push_back(i);
  if (len > 0) at.push_back(len);
  return at;
}

// The two confirmed kernels against each other, without the baselines: each
// speedup divides by its own confirmation's timing of them, and where those
// differ a shape's winner by speedup can be the baselines' noise. "" when no
// shape has both kernel times.
std::string kernels_line(const SearchVsTune& v) {
  std::vector<double> kernels, baselines;
  const ShapeVersus* widest = nullptr;  // the shape whose two baseline timings differed most
  for (const auto& s : v.shapes) {
    if (s.kernel_ratio > 0) kernels.push_back(s.kernel_ratio);
    if (s.baseline_ratio <= 0) continue;
    baselines.push_back(std::abs(std::log(s.baseline_ratio)));
    if (!widest || baselines.back() > std::abs(std::log(widest->baseline_ratio))) widest = &s;
  }
  if (kernels.empty()) return "";
  std::string line = fmt::format(
      "By kernel time alone (the two confirmed kernels, timed minutes apart in the same worker, no baseline in the "
      "ratio): search faster on {}, tune on {}, {} within {:.1f}%; the tune's time over the search's {:.4f} in "
      "geometric mean ({} shapes).",
      v.kernel_search_wins, v.kernel_tile_wins, v.kernel_ties, 100 * kTieMargin, geomean(kernels), kernels.size());
  if (widest)
    line += fmt::format(" The two confirmations' timings of the fastest baseline differed by {:.2f}% in median, at "
                        "most {:+.2f}% ({}: the search's over the tune's).",
                        100 * (std::exp(stats::median(baselines)) - 1), 100 * (widest->baseline_ratio - 1),
                        widest->task_id);
  return line + "\n";
}

}  // namespace

std::optional<SearchVsTune> search_vs_tune(const Run& run) {
  std::map<std::string, const ShapeRecord*> last;  // the last record of a task wins
  for (const auto& r : run.records) last[r.task.id()] = &r;
  SearchVsTune v;
  std::vector<std::vector<double>> sc, tc;
  for (const auto& [id, r] : last) {
    if (!r->kernel || !r->kernel->tune.is_object() || !r->kernel->tune.contains("search")) continue;
    const auto& tune = r->kernel->tune;
    // The tune's parts are JSON the record's reader does not check: read
    // leniently (core/json_read.hpp), a part of another type counts as absent.
    const auto& tile = field_or_null(tune, "tile");
    const auto& confirmed = field_or_null(tile, "confirmed");
    const auto& res = r->kernel->result;
    if (res.status != Status::ok || string_or(confirmed, "status", "") != "ok") continue;
    ShapeVersus s;
    s.task_id = id;
    s.bucket = r->bucket;
    s.m = r->task.m;
    s.search = res.speedup;
    s.tile = number_or(confirmed, "speedup", 0.0);
    const double search_us = res.cold.median_us, tile_us = number_or(confirmed, "cold_us", 0.0);
    const double search_base = res.best_baseline_us, tile_base = number_or(confirmed, "best_baseline_us", 0.0);
    if (search_us > 0 && tile_us > 0) s.kernel_ratio = tile_us / search_us;
    if (search_base > 0 && tile_base > 0) s.baseline_ratio = search_base / tile_base;
    const auto& search = field_or_null(tune, "search");
    s.explored = int(std::clamp<long long>(integer_or(search, "explored", 0), 0, 1 << 30));
    s.evaluated = int(std::clamp<long long>(integer_or(search, "evaluated", 0), 0, 1 << 30));
    const auto& search_sweep = field_or_null(search, "sweep");
    const auto& tile_sweep = field_or_null(tile, "sweep");
    s.search_curve = curve(search_sweep, s.search);
    s.tile_curve = curve(tile_sweep, s.tile);
    const std::string first = first_name(search_sweep);
    s.same_first = !first.empty() && first == first_name(tile_sweep);
    if (bool_or(search, "kept_from_earlier_run", false)) ++v.kept_searches;
    else timed_by_both(search_sweep, tile_sweep, v);
    v.same_first += s.same_first;
    const Fastest tile_best = fastest(tile_sweep);
    s.first_pick_ratio = first_over(tile_sweep, tile_best);
    if (s.first_pick_ratio > 0) v.first_pick_ratios.push_back(s.first_pick_ratio);
    s.tile_best_move = tile_best.move;
    s.search_timed_tile_best = timed(search_sweep, tile_best.name);
    if (!tile_best.name.empty()) ++v.tile_best_moves[tile_best.move.empty() ? "not recorded" : tile_best.move];
    v.search_timed_tile_best += s.search_timed_tile_best;
    v.search_wins += s.search > s.tile * (1 + kTieMargin);
    v.tile_wins += s.tile > s.search * (1 + kTieMargin);
    if (s.kernel_ratio > 0) {
      v.kernel_search_wins += s.kernel_ratio > 1 + kTieMargin;
      v.kernel_tile_wins += s.kernel_ratio < 1 / (1 + kTieMargin);
      v.kernel_ties += s.kernel_ratio <= 1 + kTieMargin && s.kernel_ratio >= 1 / (1 + kTieMargin);
    }
    v.explored += s.explored;
    v.evaluated += s.evaluated;
    sc.push_back(s.search_curve);
    tc.push_back(s.tile_curve);
    v.shapes.push_back(std::move(s));
  }
  if (v.shapes.empty()) return std::nullopt;
  v.ties = int(v.shapes.size()) - v.search_wins - v.tile_wins;
  std::vector<double> a, b;
  for (const auto& s : v.shapes) a.push_back(s.search), b.push_back(s.tile);
  v.search_geomean = geomean(a);
  v.tile_geomean = geomean(b);
  v.search_curve = mean_curve(sc);
  v.tile_curve = mean_curve(tc);
  return v;
}

std::string write_search_vs_tune(const SearchVsTune& v, const std::filesystem::path& dir) {
  std::string md = "## Search against tune, same budget, same worker\n\n";
  md += fmt::format("Geometric mean speedup over the fastest baseline (confirmed): search {:.3f}x, tune {:.3f}x "
                    "({} shapes; search faster on {}, tune on {}, {} within {:.1f}%).\n",
                    v.search_geomean, v.tile_geomean, v.shapes.size(), v.search_wins, v.tile_wins, v.ties,
                    100 * kTieMargin);
  md += fmt::format("Exploration: {} of the search's {} evaluations were counted exploration.\n", v.explored,
                    v.evaluated);
  md += kernels_line(v);
  // Where the tune found its best, and whether the search went there: a
  // search that loses to configs it never timed lost in its moves, one that
  // timed them lost to timing noise.
  if (!v.tile_best_moves.empty()) {
    std::string found;
    for (const auto& [move, n] : v.tile_best_moves) found += fmt::format("{}{} {}", found.empty() ? "" : ", ", move, n);
    md += fmt::format("The tune's fastest config, shapes by the tune's move that found it: {}; the search timed it "
                      "too on {} of {} shapes.\n",
                      found, v.search_timed_tile_best, v.shapes.size());
  }
  md += "\n";
  md += means_table("bucket", v.shapes, [](const ShapeVersus& s) { return std::pair{s.bucket, s.bucket}; });
  // By M: an LLM layer's M is its tokens (decode, small batches, prefill).
  std::set<long long> ms;
  for (const auto& s : v.shapes) ms.insert(s.m);
  md += "\n" + means_table("M", v.shapes, [&](const ShapeVersus& s) { return m_group(s.m, ms.size()); });
  // The curves in figures (cold times, as the chart): where one leads.
  const auto at = checkpoints(std::min(v.search_curve.size(), v.tile_curve.size()));
  if (!at.empty()) {
    std::string head = "\n| best so far after |", rule = "|---|", srow = "| search |", trow = "| tune |";
    for (const std::size_t i : at) {
      head += fmt::format(" {} |", i);
      rule += "---|";
      srow += fmt::format(" {:.3f}x |", v.search_curve[i - 1]);
      trow += fmt::format(" {:.3f}x |", v.tile_curve[i - 1]);
    }
    md += head + "\n" + rule + "\n" + srow + "\n" + trow + "\n";
    md += fmt::format("\n(cold times against each shape's best baseline, geometric mean over shapes; each shape's "
                      "curve is its sweep's, scaled to end at its confirmed speedup, since a sweep times without the "
                      "baselines between its kernels and a power-capped GPU clocks higher there; the search's "
                      "first config was the tune's on {} of {} shapes.)\n",
                      v.same_first, v.shapes.size());
  }
  // The two sweeps time a config alike, so where both timed one they agree
  // but for noise; the first config off alone is the protocol's (it was
  // handicapped while its time was taken beside the baselines).
  if (!v.first_ratio.empty() || !v.later_ratio.empty()) {
    auto pct = [](const std::vector<double>& r) {
      return r.empty() ? std::string("-") : fmt::format("{:+.2f}%", 100 * (stats::median(r) - 1));
    };
    md += fmt::format("Configs both sweeps timed, the search's cold time over the tune's (median): its first config "
                      "{} ({} shapes), its later ones {} ({} configs).\n",
                      pct(v.first_ratio), v.first_ratio.size(), pct(v.later_ratio), v.later_ratio.size());
  }
  if (v.kept_searches > 0)
    md += fmt::format("({} of the shapes' searches ran in an earlier run, in whole or in part, which the time limit "
                      "cut: timed in another process, they are left out of the comparison of the two timings.)\n",
                      v.kept_searches);
  if (!v.repeat_rho.empty()) {
    md += fmt::format("Their order in the two timings (Spearman's rho per shape with {} or more configs both timed): "
                      "median {:.3f}, lowest {:.3f} ({} shapes); a perfect cost model's rho against one timing of "
                      "these configs would read about this.\n",
                      kRepeatMinConfigs, stats::median(v.repeat_rho),
                      *std::min_element(v.repeat_rho.begin(), v.repeat_rho.end()), v.repeat_rho.size());
  }
  if (!v.first_pick_ratios.empty()) {
    const auto near = std::count_if(v.first_pick_ratios.begin(), v.first_pick_ratios.end(),
                                    [](double r) { return r <= kNearBest; });
    double sum = 0;
    for (double r : v.first_pick_ratios) sum += r - 1;
    md += fmt::format("The model's first pick, as the tune timed it (its first config), was within {:.0f}% of the "
                      "fastest of the tune's sweep on {} of {} shapes ({:.0f}%); its time over that fastest: mean "
                      "{:+.2f}%, median {:+.2f}%.\n",
                      100 * (kNearBest - 1), near, v.first_pick_ratios.size(),
                      100.0 * double(near) / double(v.first_pick_ratios.size()),
                      100 * sum / double(v.first_pick_ratios.size()), 100 * (stats::median(v.first_pick_ratios) - 1));
  }
  md += "\n| shape | search | tune | explored | tune's best: found by | search timed it | tune's kernel time over the "
        "search's | the search's baseline time over the tune's |\n|---|---|---|---|---|---|---|---|\n";
  const auto ratio = [](double r) { return r > 0 ? fmt::format("{:.3f}", r) : std::string("-"); };
  for (const auto& s : v.shapes)
    md += fmt::format("| {} | {:.3f}x | {:.3f}x | {} of {} | {} | {} | {} | {} |\n", s.task_id, s.search, s.tile,
                      s.explored, s.evaluated, s.tile_best_move.empty() ? "-" : s.tile_best_move,
                      s.search_timed_tile_best ? "yes" : "no", ratio(s.kernel_ratio), ratio(s.baseline_ratio));
  std::vector<search::svg::Series> series(2);
  series[0].name = "search";
  series[1].name = "tile tune";
  for (std::size_t i = 0; i < v.search_curve.size(); ++i) series[0].x.push_back(double(i + 1)), series[0].y.push_back(v.search_curve[i]);
  for (std::size_t i = 0; i < v.tile_curve.size(); ++i) series[1].x.push_back(double(i + 1)), series[1].y.push_back(v.tile_curve[i]);
  atomic_write_file(dir / "search_vs_tune.svg",
                    search::svg::line_chart("Best speedup against evaluations (geometric mean over shapes)",
                                            "evaluations per shape", "speedup over the fastest baseline (x)", series,
                                            1.0));
  md += "\n![search against tune](search_vs_tune.svg)\n";
  atomic_write_file(dir / "search_vs_tune.md", md);
  return md;
}

}  // namespace tessera::bench
