// The Markdown report: the HTML page's tables and statements, no plots.
#include <fmt/format.h>

#include "bench/detail/report_parts.hpp"
#include "bench/report.hpp"
#include "core/table.hpp"

namespace tessera::bench {

std::string report_markdown(const ReportData& d, const ReportOptions& o) {
  std::string md = "# " + detail::report_title(d) + "\n\n" + detail::method_text(d) + "\n\n";
  for (const auto& [k, v] : detail::headline(d)) md += fmt::format("- {}: {}\n", k, v);
  md += "\n## By size bucket\n\n" + buckets_markdown(d.buckets) + "\n";
  for (bool worst : {true, false}) {
    md += fmt::format("## {}\n\n", d.kernels ? (worst ? "Lowest speedups" : "Highest speedups")
                                             : (worst ? "Lowest TFLOP/s" : "Highest TFLOP/s"));
    md += to_markdown(detail::extremes_table(d, worst, o.extremes)) + "\n";
  }
  if (d.comparison) md += fmt::format("## Compared with {}\n\n{}\n", d.comparison->other_name, comparison_markdown(*d.comparison));
  md += "## Ceilings\n\n" + detail::ceiling_text(d) + "\n";
  for (std::size_t i = 0; i < d.above.size() && i < 10; ++i)
    md += fmt::format("- above the peak: {} {} {:.1f} TFLOP/s\n", d.above[i].shape, d.above[i].who, d.above[i].tflops);
  md += fmt::format("\nPlots: report.html. Tables: shapes.csv (per shape, CUDA-L2's column names), buckets.csv, "
                    "summary.json. Generated at {}.\n",
                    d.generated_at);
  return md;
}

}  // namespace tessera::bench
