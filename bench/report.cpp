#include "bench/report.hpp"

#include "core/error.hpp"
#include "core/fs.hpp"

namespace tessera::bench {

ReportData report_data(const Run& run, const ReportOptions& o) {
  if (run.records.empty()) fail_bad_input(run.dir.string() + " has no finished shape yet: nothing to report");
  ReportData d;
  d.run = &run;
  d.rows = shape_rows(run.records);
  d.buckets = summarize(run, d.rows);
  d.ceiling = resolve_ceiling(run.records, o.peak_tflops, o.dram_gbps);
  d.above = above_peak(run.records, d.ceiling);
  for (const auto& r : d.rows) d.kernels = d.kernels || r.kernel_us.has_value();
  for (const auto& r : run.records)
    if (!r.device.name.empty()) d.device = r.device.name;
  if (!o.against.empty())
    d.comparison = compare_runs(run, d.rows, load_other_table(o.against, o.against_name), o.against_method);
  d.generated_at = utc_now_iso();
  return d;
}

ReportFiles write_report(const Run& run, const ReportOptions& o) {
  const ReportData d = report_data(run, o);
  write_tables(run, d.ceiling);
  if (d.comparison) {
    atomic_write_file(run.dir / "compare.csv", comparison_csv(*d.comparison));
    atomic_write_file(run.dir / "compare.md", comparison_markdown(*d.comparison));
  }
  ReportFiles f{run.dir / "report.html", run.dir / "report.md"};
  atomic_write_file(f.html, report_html(d, o));
  atomic_write_file(f.markdown, report_markdown(d, o));
  return f;
}

}  // namespace tessera::bench
