#pragma once
// SVG charts for the bench report, drawn by tessera (no plotting library, no
// network): colour scales with their legend, heat maps over (M, N), and
// scatter plots on log axes (speedup against FLOPs, the roofline). Text goes
// through search::svg::escape; every mark has a <title> tooltip. Classes
// (cell, pt, heatmap, scatter) let tests count what was drawn.
#include <optional>
#include <string>
#include <vector>

namespace tessera::bench::charts {

// Speedups: diverging around 1 on a log scale (red slower, blue faster),
// saturating beyond [1/ratio, ratio]. Throughput: sequential from lo to hi.
struct ColourScale {
  bool diverging = true;
  double lo = 0.5, hi = 2.0;  // the domain; diverging scales are symmetric in log around 1
  std::string unit;           // "x" or " TFLOP/s"
  std::string colour(double v) const;
  bool dark(double v) const;  // whether text on this colour should be white
};
ColourScale speedup_scale(const std::vector<double>& values);
ColourScale throughput_scale(double max_value);

// A horizontal bar of the scale with ticks; marks the ends as "≤"/"≥" when values saturate.
std::string legend(const ColourScale& scale, const std::string& label, double data_min, double data_max);

struct HeatCell {
  std::size_t row = 0, col = 0;
  double value = 0;
  std::string text;     // drawn in the cell
  std::string tooltip;  // <title>
};
std::string heatmap(const std::string& title, const std::vector<std::string>& row_labels,
                    const std::vector<std::string>& col_labels, const std::string& row_axis, const std::string& col_axis,
                    const std::vector<HeatCell>& cells, const ColourScale& scale);

struct Point {
  double x = 0, y = 0;
  std::string tooltip;
  bool flagged = false;  // drawn with a red ring (e.g. above the stored peak)
};
struct Series {
  std::string name, colour;
  bool hollow = false;
  std::vector<Point> points;
};
struct Guide {  // a straight line in data coordinates, labelled at its right end
  double x0 = 0, y0 = 0, x1 = 0, y1 = 0;
  std::string label;
  bool dashed = true;
  std::string colour = "#555";
};
struct Scatter {
  std::string title, x_label, y_label;
  bool log_x = true, log_y = true;
  std::vector<Series> series;
  std::vector<Guide> guides;
  std::string css_class = "scatter";
};
std::string scatter(const Scatter& chart);

// "64", "1k", "12k", "16k"; FLOPs as "1G", "10T".
std::string short_size(double v);
std::string short_flops(double v);

}  // namespace tessera::bench::charts
