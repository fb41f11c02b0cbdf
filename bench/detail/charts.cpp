#include "bench/detail/charts.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>

#include <fmt/format.h>

#include "search/svg.hpp"

namespace tessera::bench::charts {

namespace {

using search::svg::escape;

struct Rgb {
  double r, g, b;
};
// ColorBrewer RdBu (diverging) and viridis (sequential) anchors, evenly spaced on [0, 1].
constexpr std::array<Rgb, 5> kDiverging = {{{178, 24, 43}, {239, 138, 98}, {247, 247, 247}, {103, 169, 207}, {33, 102, 172}}};
constexpr std::array<Rgb, 5> kSequential = {{{68, 1, 84}, {59, 82, 139}, {33, 145, 140}, {94, 201, 98}, {253, 231, 37}}};

constexpr double kMaxSpeedupRatio = 4.0;   // a diverging scale saturates beyond [1/4, 4]
constexpr double kMinSpeedupRatio = 1.1;   // and spans at least [1/1.1, 1.1]
constexpr int kCell = 30;                  // heat map cell, px
constexpr int kHeatLeft = 46, kHeatTop = 46;
constexpr int kPlotW = 840, kPlotH = 440;  // scatter, px
constexpr int kPlotLeft = 66, kPlotRight = 210, kPlotTop = 40, kPlotBottom = 54;

std::string css_rgb(const std::array<Rgb, 5>& anchors, double t) {
  t = std::clamp(t, 0.0, 1.0) * double(anchors.size() - 1);
  const std::size_t i = std::min(anchors.size() - 2, std::size_t(t));
  const double f = t - double(i);
  const auto& a = anchors[i];
  const auto& b = anchors[i + 1];
  return fmt::format("rgb({:.0f},{:.0f},{:.0f})", a.r + (b.r - a.r) * f, a.g + (b.g - a.g) * f, a.b + (b.b - a.b) * f);
}

// Position of v on the scale, in [0, 1] (outside when saturated).
double position(const ColourScale& s, double v) {
  if (s.diverging) return (std::log(std::max(v, 1e-9)) - std::log(s.lo)) / (std::log(s.hi) - std::log(s.lo));
  return s.hi > s.lo ? (v - s.lo) / (s.hi - s.lo) : 1.0;
}

std::string tick_label(double v, const std::string& unit) {
  if (unit == "x") return fmt::format("{:.2f}x", v);
  return fmt::format("{:.0f}", v);
}

std::vector<double> nice_linear_ticks(double lo, double hi, int count) {
  const double step = search::svg::nice_tick_step(lo, hi, count);
  std::vector<double> out;
  for (double v = std::ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) out.push_back(v);
  return out;
}

// Ticks of a log axis over [lo, hi]: evenly spaced values when it spans less
// than a decade (they read better than powers), else 1-2-5 steps, else decades.
std::vector<double> log_ticks(double lo, double hi) {
  if (hi / lo < 10) return nice_linear_ticks(lo, hi, 6);
  std::vector<double> out;
  const bool decades = hi / lo > 1e4;
  for (double d = std::pow(10.0, std::floor(std::log10(lo))); d <= hi; d *= 10)
    for (double m : {1.0, 2.0, 5.0})
      if ((!decades || m == 1.0) && d * m >= lo * 0.9999 && d * m <= hi * 1.0001) out.push_back(d * m);
  return out;
}

// A diverging scale's ticks: its ends, 1, and the geometric midpoints between.
std::vector<double> diverging_ticks(double lo, double hi) {
  return {lo, std::sqrt(lo), 1.0, std::sqrt(hi), hi};
}

struct Axis {
  double lo, hi;
  bool log;
  int p0, p1;
  double operator()(double v) const {
    const double t = log ? (std::log(v) - std::log(lo)) / (std::log(hi) - std::log(lo)) : (v - lo) / (hi - lo);
    return p0 + t * (p1 - p0);
  }
};

void pad_range(double& lo, double& hi, bool log) {
  if (!(hi > lo)) {
    lo = log ? lo / 1.5 : lo - 0.5;
    hi = log ? hi * 1.5 : hi + 0.5;
    return;
  }
  if (log) {
    const double f = std::pow(hi / lo, 0.06);
    lo /= f;
    hi *= f;
  } else {
    const double d = (hi - lo) * 0.06;
    lo -= d;
    hi += d;
  }
}

int next_chart_id() {
  static std::atomic<int> id{0};
  return ++id;
}

}  // namespace

std::string ColourScale::colour(double v) const {
  return css_rgb(diverging ? kDiverging : kSequential, position(*this, v));
}

bool ColourScale::dark(double v) const {
  const double t = std::clamp(position(*this, v), 0.0, 1.0);
  return diverging ? (t < 0.18 || t > 0.82) : t < 0.55;
}

ColourScale speedup_scale(const std::vector<double>& values) {
  double ratio = kMinSpeedupRatio;
  for (double v : values)
    if (v > 0) ratio = std::max(ratio, std::max(v, 1.0 / v));
  ratio = std::min(ratio, kMaxSpeedupRatio);
  return {true, 1.0 / ratio, ratio, "x"};
}

ColourScale throughput_scale(double max_value) { return {false, 0.0, max_value > 0 ? max_value : 1.0, " TFLOP/s"}; }

std::string legend(const ColourScale& s, const std::string& label, double data_min, double data_max) {
  constexpr int kW = 420, kBarX = 20, kBarW = 380, kBarY = 22, kBarH = 12;
  const int id = next_chart_id();
  std::string out = fmt::format(
      "<svg class=\"legend\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"62\" viewBox=\"0 0 {0} 62\" "
      "font-family=\"sans-serif\" font-size=\"11\">\n<defs><linearGradient id=\"lg{1}\" x1=\"0\" x2=\"1\" y1=\"0\" "
      "y2=\"0\">",
      kW, id);
  for (int i = 0; i <= 20; ++i) {
    const double t = i / 20.0;
    const double v = s.diverging ? std::exp(std::log(s.lo) + t * (std::log(s.hi) - std::log(s.lo))) : s.lo + t * (s.hi - s.lo);
    out += fmt::format("<stop offset=\"{:.2f}\" stop-color=\"{}\"/>", t, s.colour(v));
  }
  out += fmt::format("</linearGradient></defs>\n<text x=\"{}\" y=\"14\">{}</text>\n", kBarX, escape(label));
  out += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"url(#lg{})\" stroke=\"#888\"/>\n", kBarX,
                     kBarY, kBarW, kBarH, id);
  const auto ticks = s.diverging ? diverging_ticks(s.lo, s.hi) : nice_linear_ticks(s.lo, s.hi, 6);
  for (double v : ticks) {
    const double x = kBarX + position(s, v) * kBarW;
    std::string text = tick_label(v, s.unit);
    if (s.diverging && v <= s.lo * 1.0001 && data_min < s.lo) text = "≤" + text;
    if (s.diverging && v >= s.hi * 0.9999 && data_max > s.hi) text = "≥" + text;
    out += fmt::format(
        "<line x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"{1}\" y2=\"{2}\" stroke=\"#444\"/><text x=\"{0:.1f}\" y=\"{3}\" "
        "text-anchor=\"middle\">{4}</text>\n",
        x, kBarY + kBarH, kBarY + kBarH + 4, kBarY + kBarH + 16, escape(text));
  }
  return out + "</svg>\n";
}

std::string heatmap(const std::string& title, const std::vector<std::string>& rows, const std::vector<std::string>& cols,
                    const std::string& row_axis, const std::string& col_axis, const std::vector<HeatCell>& cells,
                    const ColourScale& scale) {
  const int w = kHeatLeft + kCell * int(cols.size()) + 10, h = kHeatTop + kCell * int(rows.size()) + 10;
  std::string s = fmt::format(
      "<svg class=\"heatmap\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
      "font-family=\"sans-serif\" font-size=\"10\">\n<text x=\"{2}\" y=\"15\" font-size=\"13\" font-weight=\"bold\">{3}"
      "</text>\n<text x=\"{4}\" y=\"{5}\" text-anchor=\"end\" fill=\"#666\">{6}\\{7}</text>\n",
      w, h, kHeatLeft, escape(title), kHeatLeft - 5, kHeatTop - 6, escape(row_axis), escape(col_axis));
  for (std::size_t c = 0; c < cols.size(); ++c)
    s += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", kHeatLeft + kCell * int(c) + kCell / 2,
                     kHeatTop - 6, escape(cols[c]));
  for (std::size_t r = 0; r < rows.size(); ++r) {
    s += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>\n", kHeatLeft - 5,
                     kHeatTop + kCell * int(r) + kCell / 2 + 4, escape(rows[r]));
    for (std::size_t c = 0; c < cols.size(); ++c)
      s += fmt::format("<rect class=\"empty\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"#eee\" "
                       "stroke=\"#fff\"/>\n",
                       kHeatLeft + kCell * int(c), kHeatTop + kCell * int(r), kCell, kCell);
  }
  for (const auto& cell : cells) {
    const int x = kHeatLeft + kCell * int(cell.col), y = kHeatTop + kCell * int(cell.row);
    s += fmt::format(
        "<g><title>{}</title><rect class=\"cell\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\" "
        "stroke=\"#fff\"/><text x=\"{}\" y=\"{}\" text-anchor=\"middle\" font-size=\"9\" fill=\"{}\">{}</text></g>\n",
        escape(cell.tooltip), x, y, kCell, kCell, scale.colour(cell.value), x + kCell / 2, y + kCell / 2 + 3,
        scale.dark(cell.value) ? "white" : "#222", escape(cell.text));
  }
  return s + "</svg>\n";
}

std::string scatter(const Scatter& c) {
  double x0 = 1e300, x1 = -1e300, y0 = 1e300, y1 = -1e300;
  for (const auto& se : c.series)
    for (const auto& p : se.points) {
      if ((c.log_x && p.x <= 0) || (c.log_y && p.y <= 0)) continue;
      x0 = std::min(x0, p.x), x1 = std::max(x1, p.x), y0 = std::min(y0, p.y), y1 = std::max(y1, p.y);
    }
  if (x0 > x1) x0 = 1, x1 = 10, y0 = 1, y1 = 10;
  for (const auto& g : c.guides)  // horizontal guides (a reference, a peak) stay in view
    if (g.y0 == g.y1 && g.y0 > 0) y0 = std::min(y0, g.y0), y1 = std::max(y1, g.y0);
  pad_range(x0, x1, c.log_x);
  pad_range(y0, y1, c.log_y);
  const Axis xs{x0, x1, c.log_x, kPlotLeft, kPlotW - kPlotRight}, ys{y0, y1, c.log_y, kPlotH - kPlotBottom, kPlotTop};
  const int id = next_chart_id();
  std::string s = fmt::format(
      "<svg class=\"{0}\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{1}\" height=\"{2}\" viewBox=\"0 0 {1} {2}\" "
      "font-family=\"sans-serif\" font-size=\"11\">\n<defs><clipPath id=\"clip{3}\"><rect x=\"{4}\" y=\"{5}\" "
      "width=\"{6}\" height=\"{7}\"/></clipPath></defs>\n<text x=\"{8}\" y=\"20\" text-anchor=\"middle\" "
      "font-size=\"14\" font-weight=\"bold\">{9}</text>\n",
      c.css_class, kPlotW, kPlotH, id, xs.p0, ys.p1, xs.p1 - xs.p0, ys.p0 - ys.p1, (xs.p0 + xs.p1) / 2, escape(c.title));
  const auto xt = c.log_x ? log_ticks(x0, x1) : nice_linear_ticks(x0, x1, 6);
  const auto yt = c.log_y ? log_ticks(y0, y1) : nice_linear_ticks(y0, y1, 6);
  for (double v : yt)
    s += fmt::format(
        "<line x1=\"{0}\" x2=\"{1}\" y1=\"{2:.1f}\" y2=\"{2:.1f}\" stroke=\"#e4e4e4\"/><text x=\"{3}\" y=\"{4:.1f}\" "
        "text-anchor=\"end\">{5}</text>\n",
        xs.p0, xs.p1, ys(v), xs.p0 - 6, ys(v) + 4, fmt::format("{:.4g}", v));
  for (double v : xt)
    s += fmt::format(
        "<line x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"{1}\" y2=\"{2}\" stroke=\"#e4e4e4\"/><text x=\"{0:.1f}\" y=\"{3}\" "
        "text-anchor=\"middle\">{4}</text>\n",
        xs(v), ys.p1, ys.p0, ys.p0 + 16, escape(short_flops(v)));
  s += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#444\"/>\n", xs.p0, ys.p1,
                   xs.p1 - xs.p0, ys.p0 - ys.p1);
  s += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", (xs.p0 + xs.p1) / 2, kPlotH - 14,
                   escape(c.x_label));
  s += fmt::format("<text transform=\"translate(16 {}) rotate(-90)\" text-anchor=\"middle\">{}</text>\n",
                   (ys.p0 + ys.p1) / 2, escape(c.y_label));
  s += fmt::format("<g clip-path=\"url(#clip{})\">\n", id);
  for (const auto& g : c.guides)
    s += fmt::format("<line class=\"guide\" x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"{}\" "
                     "stroke-width=\"1.5\"{}/>\n",
                     xs(g.x0), ys(g.y0), xs(g.x1), ys(g.y1), g.colour, g.dashed ? " stroke-dasharray=\"6 4\"" : "");
  for (const auto& se : c.series)
    for (const auto& p : se.points) {
      if ((c.log_x && p.x <= 0) || (c.log_y && p.y <= 0)) continue;
      s += fmt::format("<circle class=\"pt\" cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3.2\" fill=\"{}\" fill-opacity=\"{}\" "
                       "stroke=\"{}\" stroke-width=\"{}\"><title>{}</title></circle>\n",
                       xs(p.x), ys(p.y), se.hollow ? "none" : se.colour, se.hollow ? "0" : "0.7",
                       p.flagged ? "#e00" : se.colour, p.flagged ? 2 : 1, escape(p.tooltip));
    }
  s += "</g>\n";
  int ly = kPlotTop + 8;
  for (const auto& se : c.series) {
    s += fmt::format(
        "<circle cx=\"{0}\" cy=\"{1}\" r=\"5\" fill=\"{2}\" fill-opacity=\"{3}\" stroke=\"{4}\"/><text x=\"{5}\" "
        "y=\"{6}\">{7} ({8})</text>\n",
        kPlotW - kPlotRight + 18, ly, se.hollow ? "none" : se.colour, se.hollow ? "0" : "0.7", se.colour,
        kPlotW - kPlotRight + 28, ly + 4, escape(se.name), se.points.size());
    ly += 18;
  }
  for (const auto& g : c.guides) {  // guides are named in the legend, where no point can hide the name
    if (g.label.empty()) continue;
    s += fmt::format(
        "<line x1=\"{0}\" x2=\"{1}\" y1=\"{2}\" y2=\"{2}\" stroke=\"{7}\" stroke-width=\"1.5\"{3}/><text x=\"{4}\" "
        "y=\"{5}\">{6}</text>\n",
        kPlotW - kPlotRight + 10, kPlotW - kPlotRight + 26, ly, g.dashed ? " stroke-dasharray=\"6 4\"" : "",
        kPlotW - kPlotRight + 28, ly + 4, escape(g.label), g.colour);
    ly += 18;
  }
  return s + "</svg>\n";
}

std::string short_size(double v) {
  if (v >= 1024 && std::fmod(v, 1024) == 0) return fmt::format("{}k", v / 1024);
  return fmt::format("{:.0f}", v);
}

std::string short_flops(double v) {
  constexpr std::array<const char*, 5> kUnits = {"", "k", "M", "G", "T"};
  std::size_t u = 0;
  while (v >= 1000 && u + 1 < kUnits.size()) v /= 1000, ++u;
  return fmt::format("{:.3g}{}", v, kUnits[u]);
}

}  // namespace tessera::bench::charts
