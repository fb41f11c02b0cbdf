#pragma once
// Minimal SVG charts for the run report, written by the project itself (no
// plotting library): line chart, bar chart, heatmap.
#include <optional>
#include <string>
#include <vector>

namespace tessera::search::svg {

inline constexpr int kWidth = 720;   // px
inline constexpr int kHeight = 400;  // px

struct Series {
  std::string name;
  std::vector<double> x, y;
};

// Step-style lines (a best-so-far curve only changes at improvements).
std::string line_chart(const std::string& title, const std::string& x_label, const std::string& y_label,
                       const std::vector<Series>& series, std::optional<double> reference_y = std::nullopt);

// One bar per label; an optional reference line (e.g. 1.0 = the baseline).
std::string bar_chart(const std::string& title, const std::string& y_label, const std::vector<std::string>& labels,
                      const std::vector<double>& values, std::optional<double> reference_y = std::nullopt);

// values[row][col]; nullopt cells are drawn empty. Colour scales from the
// smallest to the largest value; each filled cell is labelled with its value.
std::string heatmap(const std::string& title, const std::vector<std::string>& rows,
                    const std::vector<std::string>& cols, const std::vector<std::vector<std::optional<double>>>& values);

std::string escape(const std::string& text);

// Charts of this file one above the other, in one SVG document (each keeps its
// own size; the document is as wide as the widest): a figure of several panels
// in one file.
std::string stack(const std::vector<std::string>& charts);

// A "nice" tick spacing (1, 2, 2.5 or 5 times a power of ten) that cuts
// [lo, hi] into about `count` steps; the report's charts and bench's share it.
double nice_tick_step(double lo, double hi, int count);

}  // namespace tessera::search::svg
