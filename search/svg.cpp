#include "search/svg.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>

#include <fmt/format.h>

#include "core/error.hpp"

namespace tessera::search::svg {

namespace {

constexpr int kLeft = 70, kRight = 160, kTop = 40, kBottom = 60;  // plot margins, px
constexpr const char* kPalette[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                                    "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};

std::string header(int w, int h, const std::string& title) {
  return fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
      "font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"{0}\" height=\"{1}\" fill=\"white\"/>\n"
      "<text x=\"{2}\" y=\"22\" text-anchor=\"middle\" font-size=\"15\">{3}</text>\n",
      w, h, w / 2, escape(title));
}

struct Scale {
  double lo, hi;
  int p0, p1;  // pixels for lo and hi
  double operator()(double v) const { return hi > lo ? p0 + (v - lo) / (hi - lo) * (p1 - p0) : (p0 + p1) / 2.0; }
};

// Rounds a range outwards to "nice" ticks.
std::vector<double> ticks(double& lo, double& hi, int count = 5) {
  if (!(hi > lo)) {
    lo -= 0.5;
    hi += 0.5;
  }
  const double step = nice_tick_step(lo, hi, count);
  lo = std::floor(lo / step) * step;
  hi = std::ceil(hi / step) * step;
  std::vector<double> out;
  for (double v = lo; v <= hi + step * 1e-9; v += step) out.push_back(v);
  return out;
}

// Ticks of one axis read alike: 5, 10, 15 (not 5, 10.0, 15.0), and 12.5 keeps its digit.
std::string fmt_num(double v) {
  if (std::abs(v) >= 1000) return fmt::format("{:.0f}", v);
  if (std::abs(v) >= 10) return fmt::format("{:.4g}", v);
  return fmt::format("{:.3g}", v);
}

std::string axes(const Scale& xs, const Scale& ys, const std::vector<double>& xt, const std::vector<double>& yt,
                 const std::string& x_label, const std::string& y_label) {
  std::string s;
  for (double v : yt)
    s += fmt::format(
        "<line x1=\"{0}\" x2=\"{1}\" y1=\"{2:.1f}\" y2=\"{2:.1f}\" stroke=\"#ddd\"/><text x=\"{3}\" y=\"{4:.1f}\" "
        "text-anchor=\"end\">{5}</text>\n",
        xs.p0, xs.p1, ys(v), xs.p0 - 6, ys(v) + 4, fmt_num(v));
  for (double v : xt)
    s += fmt::format("<text x=\"{0:.1f}\" y=\"{1}\" text-anchor=\"middle\">{2}</text>\n", xs(v), ys.p0 + 18,
                     fmt_num(v));
  s += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#333\"/>\n", xs.p0,
                   ys.p1, xs.p1 - xs.p0, ys.p0 - ys.p1);
  s += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", (xs.p0 + xs.p1) / 2, ys.p0 + 40,
                   escape(x_label));
  s += fmt::format("<text transform=\"translate(18 {}) rotate(-90)\" text-anchor=\"middle\">{}</text>\n",
                   (ys.p0 + ys.p1) / 2, escape(y_label));
  return s;
}

std::string reference_line(const Scale& xs, const Scale& ys, double y) {
  return fmt::format(
      "<line x1=\"{0}\" x2=\"{1}\" y1=\"{2:.1f}\" y2=\"{2:.1f}\" stroke=\"#555\" stroke-dasharray=\"5 4\"/>\n", xs.p0,
      xs.p1, ys(y));
}

}  // namespace

std::string escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string line_chart(const std::string& title, const std::string& x_label, const std::string& y_label,
                       const std::vector<Series>& series, std::optional<double> reference_y) {
  double x0 = 1e300, x1 = -1e300, y0 = 1e300, y1 = -1e300;
  for (const auto& s : series)
    for (std::size_t i = 0; i < s.x.size() && i < s.y.size(); ++i) {
      x0 = std::min(x0, s.x[i]);
      x1 = std::max(x1, s.x[i]);
      y0 = std::min(y0, s.y[i]);
      y1 = std::max(y1, s.y[i]);
    }
  if (x0 > x1) x0 = 0, x1 = 1, y0 = 0, y1 = 1;
  if (reference_y) y0 = std::min(y0, *reference_y), y1 = std::max(y1, *reference_y);
  const auto xt = ticks(x0, x1), yt = ticks(y0, y1);
  const Scale xs{x0, x1, kLeft, kWidth - kRight}, ys{y0, y1, kHeight - kBottom, kTop};
  std::string s = header(kWidth, kHeight, title) + axes(xs, ys, xt, yt, x_label, y_label);
  if (reference_y) s += reference_line(xs, ys, *reference_y);
  for (std::size_t k = 0; k < series.size(); ++k) {
    const auto& se = series[k];
    const char* colour = kPalette[k % std::size(kPalette)];
    std::string pts;
    for (std::size_t i = 0; i < se.x.size() && i < se.y.size(); ++i) {
      if (i > 0) pts += fmt::format("{:.1f},{:.1f} ", xs(se.x[i]), ys(se.y[i - 1]));  // step
      pts += fmt::format("{:.1f},{:.1f} ", xs(se.x[i]), ys(se.y[i]));
    }
    s += fmt::format("<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"2\" points=\"{}\"/>\n", colour, pts);
    const int ly = kTop + 16 * int(k) + 8;
    s += fmt::format(
        "<line x1=\"{0}\" x2=\"{1}\" y1=\"{2}\" y2=\"{2}\" stroke=\"{3}\" stroke-width=\"3\"/><text x=\"{4}\" "
        "y=\"{5}\">{6}</text>\n",
        kWidth - kRight + 10, kWidth - kRight + 30, ly, colour, kWidth - kRight + 34, ly + 4, escape(se.name));
  }
  return s + "</svg>\n";
}

std::string bar_chart(const std::string& title, const std::string& y_label, const std::vector<std::string>& labels,
                      const std::vector<double>& values, std::optional<double> reference_y) {
  double y0 = 0, y1 = 0;
  for (double v : values) y1 = std::max(y1, v);
  if (reference_y) y1 = std::max(y1, *reference_y);
  if (y1 <= 0) y1 = 1;
  const auto yt = ticks(y0, y1);
  const int bottom = kHeight - kBottom - 40;  // room for rotated labels
  const Scale xs{0, double(std::max<std::size_t>(1, values.size())), kLeft, kWidth - 40};
  const Scale ys{y0, y1, bottom, kTop};
  std::string s = header(kWidth, kHeight, title) + axes(xs, ys, {}, yt, "", y_label);
  const double w = (xs.p1 - xs.p0) / std::max<double>(1.0, double(values.size()));
  for (std::size_t i = 0; i < values.size(); ++i) {
    const double x = xs.p0 + w * double(i) + w * 0.15;
    const double top = ys(values[i]);
    const bool above = reference_y && values[i] >= *reference_y;
    s += fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"{}\"/>\n", x, top,
                     w * 0.7, std::max(0.0, ys.p0 - top), above ? "#2ca02c" : "#1f77b4");
    s += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\" font-size=\"10\">{}</text>\n",
                     x + w * 0.35, top - 3, fmt_num(values[i]));
    s += fmt::format(
        "<text transform=\"translate({:.1f} {}) rotate(35)\" font-size=\"10\">{}</text>\n", x + w * 0.2,
        bottom + 12, escape(i < labels.size() ? labels[i] : ""));
  }
  if (reference_y) s += reference_line(xs, ys, *reference_y);
  return s + "</svg>\n";
}

std::string heatmap(const std::string& title, const std::vector<std::string>& rows, const std::vector<std::string>& cols,
                    const std::vector<std::vector<std::optional<double>>>& values) {
  double lo = 1e300, hi = -1e300;
  for (const auto& r : values)
    for (const auto& v : r)
      if (v) lo = std::min(lo, *v), hi = std::max(hi, *v);
  constexpr int kCell = 44, kRowLabel = 110, kColLabel = 90;
  const int w = std::max(kWidth, kRowLabel + kCell * int(cols.size()) + 30);  // room for the title
  const int h = kTop + kColLabel + kCell * int(rows.size()) + 30;
  std::string s = header(w, h, title);
  for (std::size_t c = 0; c < cols.size(); ++c)
    s += fmt::format("<text transform=\"translate({} {}) rotate(-55)\" font-size=\"10\">{}</text>\n",
                     kRowLabel + kCell * int(c) + kCell / 2, kTop + kColLabel - 4, escape(cols[c]));
  for (std::size_t r = 0; r < rows.size(); ++r) {
    const int y = kTop + kColLabel + kCell * int(r);
    s += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\" font-size=\"11\">{}</text>\n", kRowLabel - 6,
                     y + kCell / 2 + 4, escape(rows[r]));
    for (std::size_t c = 0; c < cols.size(); ++c) {
      const int x = kRowLabel + kCell * int(c);
      const auto v = r < values.size() && c < values[r].size() ? values[r][c] : std::nullopt;
      if (!v) {
        s += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"#f4f4f4\" stroke=\"#fff\"/>\n", x,
                         y, kCell, kCell);
        continue;
      }
      const double t = hi > lo ? (*v - lo) / (hi - lo) : 1.0;  // white-blue to dark blue
      const int red = int(220 - 200 * t), green = int(235 - 150 * t), blue = int(250 - 70 * t);
      s += fmt::format(
          "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"rgb({},{},{})\" stroke=\"#fff\"/>"
          "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" font-size=\"10\" fill=\"{}\">{}</text>\n",
          x, y, kCell, kCell, red, green, blue, x + kCell / 2, y + kCell / 2 + 4, t > 0.6 ? "white" : "black",
          fmt::format("{:.2f}", *v));
    }
  }
  return s + "</svg>\n";
}

std::string stack(const std::vector<std::string>& charts) {
  // Each chart starts with header()'s tag: its size is read back from there.
  const auto attribute = [](const std::string& chart, const std::string& name) {
    const std::string key = " " + name + "=\"";
    const std::size_t at = chart.find(key), tag_end = chart.find('>');
    if (chart.rfind("<svg ", 0) != 0 || at == std::string::npos || at > tag_end)
      throw Error("svg::stack: not a chart of svg.hpp");
    return std::stoi(chart.substr(at + key.size()));
  };
  int width = 0, height = 0;
  std::string body;
  for (const auto& chart : charts) {
    width = std::max(width, attribute(chart, "width"));
    body += fmt::format("<svg y=\"{}\"{}", height, chart.substr(4));  // placed below the charts before it
    height += attribute(chart, "height");
  }
  return fmt::format("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\">\n",
                     width, height) +
         body + "</svg>\n";
}

double nice_tick_step(double lo, double hi, int count) {
  const double raw = (hi - lo) / count;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 2.5, 5.0})
    if (raw <= m * mag) return m * mag;
  return 10 * mag;
}

}  // namespace tessera::search::svg
