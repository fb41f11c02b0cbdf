// The HTML report: one file, inline CSS and SVG, nothing fetched.
#include <algorithm>
#include <array>
#include <map>
#include <regex>
#include <set>

#include <fmt/format.h>

#include "bench/detail/charts.hpp"
#include "bench/detail/report_parts.hpp"
#include "bench/report.hpp"
#include "core/table.hpp"
#include "search/svg.hpp"

namespace tessera::bench {

namespace {

using search::svg::escape;

constexpr std::array kBucketColours = {"#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf"};

// Marks on <body> how many charts the browser laid out with a non-zero size,
// and the rows of the bucket table: the report's browser test reads them
// from the rendered DOM. The only script on the page; it fetches nothing.
constexpr const char* kDrawnCheck = R"(<script>
(function () {
  var svgs = document.querySelectorAll('svg'), drawn = 0;
  for (var i = 0; i < svgs.length; ++i) { var r = svgs[i].getBoundingClientRect(); if (r.width > 0 && r.height > 0) ++drawn; }
  document.body.setAttribute('data-charts-drawn', String(drawn));
  document.body.setAttribute('data-bucket-rows', String(document.querySelectorAll('#buckets tr').length));
})();
</script>
)";

constexpr const char* kStyle = R"(
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; color: #1d1d1f; margin: 0; background: #fafafa; }
main { max-width: 1320px; margin: 0 auto; padding: 24px 32px 48px; }
h1 { font-size: 22px; margin: 0 0 4px; }
h2 { font-size: 17px; margin: 34px 0 8px; border-bottom: 1px solid #ddd; padding-bottom: 4px; }
h3 { font-size: 14px; margin: 16px 0 4px; }
p, li { line-height: 1.45; max-width: 1100px; }
.sub { color: #555; margin: 0 0 14px; }
.cards { display: grid; grid-template-columns: repeat(auto-fill, minmax(250px, 1fr)); gap: 10px; margin: 14px 0; }
.card { background: #fff; border: 1px solid #e2e2e2; border-radius: 6px; padding: 10px 12px; }
.card .k { color: #666; font-size: 12px; text-transform: uppercase; letter-spacing: .03em; }
.card .v { font-size: 16px; margin-top: 4px; }
table { border-collapse: collapse; background: #fff; font-size: 13px; margin: 6px 0 4px; }
th, td { border: 1px solid #e0e0e0; padding: 4px 8px; text-align: left; white-space: nowrap; }
th { background: #f0f0f0; font-weight: 600; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
th.group { text-align: center; }
tr:nth-child(even) td { background: #fbfbfb; }
.grid { display: grid; grid-template-columns: repeat(auto-fill, minmax(360px, 1fr)); gap: 8px 14px; }
figure { margin: 0; background: #fff; border: 1px solid #e6e6e6; border-radius: 6px; padding: 6px; text-align: center; }
figcaption { text-align: left; }
figure.wide { display: inline-block; margin-top: 8px; }
figcaption { font-size: 12px; color: #555; margin: 4px 6px; max-width: 760px; }
.warn { background: #fff4d6; border: 1px solid #f0c36d; border-radius: 6px; padding: 8px 12px; }
.note { color: #555; font-size: 13px; }
code { background: #f2f2f2; padding: 1px 4px; border-radius: 3px; }
)";

// Figures ("1.034x", "66.0%", "12 of 40", "1.1x (1.2x)") are right-aligned, names and shapes left.
std::string cell_html(const std::string& c) {
  static const std::regex figure(R"(^-$|^-?[\d.]+(x|%)?( of \d+| \([\d.]+x?\))?$)");
  return fmt::format("<td{}>{}</td>", std::regex_match(c, figure) ? " class=\"num\"" : "", escape(c));
}

// `groups`: an optional first header row of (label, columns spanned).
std::string table_html(const std::string& id, const Table& table,
                       const std::vector<std::pair<std::string, int>>& groups = {}) {
  std::string s = fmt::format("<table id=\"{}\">", id);
  if (!groups.empty()) {
    s += "<tr>";
    for (const auto& [label, span] : groups)
      s += fmt::format("<th class=\"group\" colspan=\"{}\">{}</th>", span, escape(label));
    s += "</tr>\n";
  }
  s += "<tr>";
  for (const auto& h : table.headers()) s += "<th>" + escape(h) + "</th>";
  s += "</tr>\n";
  for (const auto& r : table.rows()) {
    s += "<tr>";
    for (const auto& c : r) s += cell_html(c);
    s += "</tr>\n";
  }
  return s + "</table>\n";
}

std::string bucket_colour(const ReportData& d, const std::string& bucket) {
  const auto& bs = d.run->config.buckets;
  for (std::size_t i = 0; i < bs.size(); ++i)
    if (bs[i].name == bucket) return kBucketColours[i % kBucketColours.size()];
  return "#777";
}

std::string cards_html(const ReportData& d) {
  std::string s = "<div class=\"cards\">";
  for (const auto& [k, v] : detail::headline(d))
    s += fmt::format("<div class=\"card\"><div class=\"k\">{}</div><div class=\"v\">{}</div></div>", escape(k), escape(v));
  return s + "</div>\n";
}

std::string buckets_html(const ReportData& d) {
  std::vector<std::string> headers = {"bucket", "shapes", "done"};
  std::vector<std::pair<std::string, int>> groups = {{"", 3}};
  if (d.kernels) {
    headers.insert(headers.end(), {"kernel ok", "failed"});
    groups.front().second = 5;
    for (const auto& c : max_column_names()) {
      headers.insert(headers.end(), {"geomean", "mean", "faster on"});
      groups.push_back({"vs " + c, 3});
    }
  } else {
    for (const auto& b : baseline_names()) {
      headers.insert(headers.end(), {"TFLOP/s (geomean)", "fastest on"});
      groups.push_back({b, 2});
    }
  }
  Table table(std::move(headers));
  for (const auto& s : d.buckets) {
    std::vector<std::string> r = {s.bucket, std::to_string(s.shapes), std::to_string(s.done)};
    if (d.kernels) {
      r.push_back(std::to_string(s.kernel_ok));
      r.push_back(std::to_string(s.kernel_failed));
      for (const auto& c : max_column_names()) {
        auto it = s.speedup.find(c);
        if (it == s.speedup.end() || it->second.n == 0) {
          r.insert(r.end(), {"-", "-", "-"});
          continue;
        }
        r.push_back(fmt::format("{:.3f}x", it->second.geomean));
        r.push_back(fmt::format("{:.3f}x", it->second.mean));
        r.push_back(fmt::format("{} of {}", it->second.wins, it->second.n));
      }
    } else {
      for (const auto& b : baseline_names()) {
        auto t = s.baseline_tflops.find(b);
        auto f = s.fastest_baseline.find(b);
        r.push_back(t == s.baseline_tflops.end() ? "-" : fmt::format("{:.1f}", t->second));
        r.push_back(std::to_string(f == s.fastest_baseline.end() ? 0 : f->second));
      }
    }
    table.add_row(std::move(r));
  }
  std::string edges;
  for (const auto& b : d.run->config.buckets)
    edges += fmt::format("{}{}: {}", edges.empty() ? "" : "; ", b.name,
                         b.max_flops ? fmt::format("≤ {} FLOP", charts::short_flops(*b.max_flops)) : std::string("the rest"));
  const std::string reading = d.kernels ? "Geometric and arithmetic means of the per-shape speedups; \"faster on\" "
                                          "counts the shapes with a speedup above 1."
                                        : "Each baseline's geometric-mean TFLOP/s; \"fastest on\" counts the shapes "
                                          "where it was the fastest of the four.";
  return "<h2>By size bucket</h2>\n" + table_html("buckets", table, groups) +
         fmt::format("<p class=\"note\">Buckets by FLOPs = 2·M·N·K ({}). {}</p>\n", escape(edges), escape(reading));
}

std::string heatmaps_html(const ReportData& d) {
  std::set<std::int64_t> ms, ns, ks;
  std::vector<double> values;
  for (const auto& r : d.rows)
    if (auto v = detail::shape_value(r, d.kernels)) {
      ms.insert(r.task.m), ns.insert(r.task.n), ks.insert(r.task.k);
      values.push_back(*v);
    }
  const std::string what = d.kernels ? "Speedup over the fastest baseline" : "TFLOP/s of the fastest baseline";
  std::string s = "<h2>" + what + ", over (M, N) for each K</h2>\n";
  if (values.empty()) return s + "<p class=\"note\">Nothing timed yet.</p>\n";
  if (int(ks.size()) > kMaxHeatmaps || int(ms.size()) > kMaxHeatmapAxis || int(ns.size()) > kMaxHeatmapAxis)
    return s + fmt::format("<p class=\"note\">The shapes do not form a grid ({} values of M, {} of N, {} of K): see "
                           "the plots and tables below.</p>\n",
                           ms.size(), ns.size(), ks.size());
  const auto [lo, hi] = std::minmax_element(values.begin(), values.end());
  const charts::ColourScale scale =
      d.kernels ? charts::speedup_scale(values)
                : charts::throughput_scale(std::max(*hi, d.ceiling.has_peak() ? d.ceiling.peak_tflops : 0.0));
  s += charts::legend(scale, d.kernels ? "speedup (red: slower than the fastest baseline, blue: faster)" : "TFLOP/s",
                      *lo, *hi);
  const std::vector<std::int64_t> mv(ms.begin(), ms.end()), nv(ns.begin(), ns.end());
  std::vector<std::string> ml, nl;
  for (auto m : mv) ml.push_back(charts::short_size(double(m)));
  for (auto n : nv) nl.push_back(charts::short_size(double(n)));
  s += "<div class=\"grid\">\n";
  for (auto k : ks) {
    std::vector<charts::HeatCell> cells;
    for (const auto& r : d.rows) {
      const auto v = detail::shape_value(r, d.kernels);
      if (r.task.k != k || !v) continue;
      charts::HeatCell c;
      c.row = std::size_t(std::find(mv.begin(), mv.end(), r.task.m) - mv.begin());
      c.col = std::size_t(std::find(nv.begin(), nv.end(), r.task.n) - nv.begin());
      c.value = *v;
      c.text = d.kernels ? fmt::format("{:.2f}", *v) : fmt::format("{:.{}f}", *v, *v < 10 ? 1 : 0);
      c.tooltip = d.kernels ? fmt::format("{}: {:.3f}x, kernel {} {:.2f} µs, {} {:.2f} µs", r.task.shape(), *v, r.kernel,
                                          *r.kernel_us, r.best_baseline, *r.best_baseline_us)
                            : fmt::format("{}: {:.1f} TFLOP/s, {} {:.2f} µs", r.task.shape(), *v, r.best_baseline,
                                          *r.best_baseline_us);
      cells.push_back(std::move(c));
    }
    s += "<figure>" + charts::heatmap("K = " + charts::short_size(double(k)), ml, nl, "M", "N", cells, scale) +
         "</figure>\n";
  }
  return s + "</div>\n<p class=\"note\">Rows are M, columns N; hover a cell for its times. Grey: not measured (or no "
             "timed kernel).</p>\n";
}

std::string speedup_scatter_html(const ReportData& d) {
  if (!d.kernels) return {};
  charts::Scatter c{"Speedup over the fastest baseline against the problem's FLOPs", "FLOPs (2·M·N·K)",
                    "speedup (log scale)", true, true, {}, {}, "scatter"};
  double x0 = 1e300, x1 = 0;
  for (const auto& b : d.run->config.buckets) {
    charts::Series se{b.name, bucket_colour(d, b.name), false, {}};
    for (const auto& r : d.rows)
      if (auto v = detail::shape_value(r, true); v && r.bucket == b.name) {
        se.points.push_back({r.task.flops(), *v, fmt::format("{}: {:.3f}x ({})", r.task.shape(), *v, r.kernel), false});
        x0 = std::min(x0, r.task.flops()), x1 = std::max(x1, r.task.flops());
      }
    c.series.push_back(std::move(se));
  }
  c.guides.push_back({x0 / 100, 1.0, x1 * 100, 1.0, "1 = the fastest baseline", true});
  return "<h2>Speedup against FLOPs</h2>\n<figure class=\"wide\">" + charts::scatter(c) +
         "<figcaption>One point per shape, coloured by bucket. Above the dashed line the kernel is faster than every "
         "baseline.</figcaption></figure>\n";
}

std::string roofline_html(const ReportData& d) {
  charts::Scatter c{"TFLOP/s against arithmetic intensity (roofline)", "FLOP per byte (2·M·N·K / minimum bytes moved)",
                    "TFLOP/s (log scale)", true, true, {}, {}, "scatter roofline"};
  charts::Series kernel{"kernel", "#1f77b4", false, {}}, base{"fastest baseline", "#555", true, {}};
  double x0 = 1e300, x1 = 0;
  for (const auto& r : d.rows) {
    const double ai = r.task.flops() / r.task.min_bytes();
    x0 = std::min(x0, ai), x1 = std::max(x1, ai);
    auto add = [&](charts::Series& se, double us, const std::string& who) {
      const double t = r.task.tflops_at(us);
      se.points.push_back({ai, t, fmt::format("{}: {} {:.1f} TFLOP/s{}", r.task.shape(), who, t,
                                              d.ceiling.has_peak() ? fmt::format(" ({:.1f}% of peak)", percent_of_peak(t, d.ceiling)) : ""),
                           d.ceiling.has_peak() && t > d.ceiling.peak_tflops});
    };
    if (r.kernel_us) add(kernel, *r.kernel_us, r.kernel);
    if (r.best_baseline_us) add(base, *r.best_baseline_us, r.best_baseline);
  }
  if (!kernel.points.empty()) c.series.push_back(std::move(kernel));
  c.series.push_back(std::move(base));
  if (d.ceiling.has_peak())
    c.guides.push_back({x0 / 100, d.ceiling.peak_tflops, x1 * 100, d.ceiling.peak_tflops,
                        fmt::format("peak {:.0f} TFLOP/s", d.ceiling.peak_tflops), false, "#b2182b"});
  if (d.ceiling.has_bandwidth()) {
    const double bw = d.ceiling.dram_gbps / 1000.0;  // TFLOP/s per FLOP/byte
    const double ridge = d.ceiling.has_peak() ? d.ceiling.peak_tflops / bw : x1 * 100;
    c.guides.push_back({x0 / 100, bw * x0 / 100, ridge, bw * ridge, fmt::format("DRAM {:.0f} GB/s", d.ceiling.dram_gbps),
                        false, "#1b7837"});
  }
  return "<h2>Roofline</h2>\n<figure class=\"wide\">" + charts::scatter(c) + "<figcaption>" +
         escape(detail::ceiling_text(d)) + " Points ringed in red are above the peak.</figcaption></figure>\n";
}

std::string extremes_html(const ReportData& d, int n) {
  std::string s = "<h2>The worst and the best shapes</h2>\n";
  for (bool worst : {true, false}) {
    s += fmt::format("<h3>{}</h3>\n", d.kernels ? (worst ? "Lowest speedups" : "Highest speedups")
                                                : (worst ? "Lowest TFLOP/s" : "Highest TFLOP/s"));
    s += table_html(worst ? "worst" : "best", detail::extremes_table(d, worst, n));
  }
  return s + "<p class=\"note\">Counters (CUPTI, percent of peak throughput) where the sweep collected them: "
             "tile-tuned winners always, other kernels with --counters.</p>\n";
}

std::string comparison_html(const ReportData& d) {
  if (!d.comparison) return {};
  const Comparison& c = *d.comparison;
  std::string s = fmt::format("<h2>Compared with {}</h2>\n<p class=\"warn\">{}</p>\n", escape(c.other_name), escape(caveat(c)));
  s += table_html("compare", comparison_table(c));
  const std::string col = std::find(c.columns.begin(), c.columns.end(), "cuBLASLt-auto-tuning-max") != c.columns.end()
                              ? "cuBLASLt-auto-tuning-max"
                              : c.columns.front();
  charts::Scatter sc{"Speedup over " + col + ": tessera against " + c.other_name, c.other_name + "'s speedup (their method)",
                     "tessera's speedup", true, true, {}, {}, "scatter compare"};
  double lo = 1e300, hi = 0;
  for (const auto& b : d.run->config.buckets) {
    charts::Series se{b.name, bucket_colour(d, b.name), false, {}};
    for (const auto& r : c.rows) {
      auto o = r.ours.find(col);
      if (r.bucket != b.name || o == r.ours.end()) continue;
      const double t = r.theirs.at(col);
      se.points.push_back({t, o->second, fmt::format("{}: tessera {:.3f}x, {} {:.3f}x", r.mnk, o->second, c.other_name, t), false});
      lo = std::min({lo, t, o->second}), hi = std::max({hi, t, o->second});
    }
    sc.series.push_back(std::move(se));
  }
  sc.guides.push_back({lo / 10, lo / 10, hi * 10, hi * 10, "equal speedups", true});
  return s + "<figure class=\"wide\">" + charts::scatter(sc) +
         "<figcaption>Above the diagonal tessera's speedup over the baseline is the larger. Each side's speedup "
         "comes from its own runs and method.</figcaption></figure>\n";
}

std::string method_html(const ReportData& d, const ReportOptions& o) {
  const auto& c = d.run->config;
  std::string s = "<h2>How this was measured</h2>\n<p>" + escape(detail::method_text(d)) + "</p>\n";
  s += "<p>" + escape(detail::ceiling_text(d)) + "</p>\n";
  if (!d.above.empty()) {
    s += "<p class=\"warn\">Above the peak (as measured): ";
    for (std::size_t i = 0; i < d.above.size() && i < 10; ++i)
      s += fmt::format("{}{} {} {:.1f} TFLOP/s", i ? "; " : "", escape(d.above[i].shape), escape(d.above[i].who),
                       d.above[i].tflops);
    s += d.above.size() > 10 ? fmt::format("; and {} more.</p>\n", d.above.size() - 10) : ".</p>\n";
  }
  s += fmt::format("<p class=\"note\">Tasks: <code>{}</code> ({}). Kernels: <code>{}</code>. Options: <code>{}</code>. "
                   "Files in <code>{}</code>: results.jsonl (one record per shape), shapes.csv, buckets.csv, "
                   "summary.json{}. Regenerate with <code>tessera bench report {}{}</code>.</p>\n",
                   escape(c.tasks_file), escape(c.task_set), escape(c.kernels), escape(c.options.dump()),
                   escape(d.run->dir.string()), d.comparison ? ", compare.csv" : "", escape(d.run->dir.string()),
                   o.against.empty() ? "" : " --against " + escape(o.against.string()));
  return s;
}

}  // namespace

std::string report_html(const ReportData& d, const ReportOptions& o) {
  const std::string title = detail::report_title(d);
  std::string h = fmt::format("<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>{}</title>\n"
                              "<style>{}</style></head>\n<body><main>\n<h1>{}</h1>\n<p class=\"sub\">{}</p>\n",
                              escape(title), kStyle, escape(title), escape(detail::method_text(d)));
  h += cards_html(d);
  h += buckets_html(d);
  h += heatmaps_html(d);
  h += speedup_scatter_html(d);
  h += roofline_html(d);
  h += extremes_html(d, o.extremes);
  h += comparison_html(d);
  h += method_html(d, o);
  h += fmt::format("<p class=\"note\">Generated by tessera bench report at {}.</p>\n</main>\n{}</body></html>\n",
                   escape(d.generated_at), kDrawnCheck);
  return h;
}

}  // namespace tessera::bench
