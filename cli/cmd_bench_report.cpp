// `tessera bench compare RUN --against FILE.csv` and `tessera bench report RUN`
// (docs/bench.md): read a suite's run folder, never the GPU.
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "bench/compare.hpp"
#include "bench/join.hpp"
#include "bench/report.hpp"
#include "bench/run.hpp"
#include "bench/search_vs_tune.hpp"
#include "bench/table.hpp"
#include "cli/bench_commands.hpp"
#include "core/error.hpp"
#include "core/fs.hpp"

namespace tessera::cli {

namespace {

struct CompareArgs {
  std::string run;
  std::string against;
  std::string name = "CUDA-L2";
  std::string method = bench::kCudaL2Method;
};

struct ReportArgs {
  std::vector<std::string> runs;
  std::string out;  // several runs: the folder they are joined into
  bench::ReportOptions options;
  std::string against;
};

void run_compare(const CompareArgs& a) {
  const bench::Run run = bench::load_run(a.run);
  const auto rows = bench::shape_rows(run.records);
  const auto c = bench::compare_runs(run, rows, bench::load_other_table(a.against, a.name), a.method);
  atomic_write_file(run.dir / "compare.csv", bench::comparison_csv(c));
  atomic_write_file(run.dir / "compare.md", bench::comparison_markdown(c));
  fmt::print("{}\nper shape: {}\n", bench::comparison_markdown(c), (run.dir / "compare.csv").string());
}

void run_report(ReportArgs a) {
  if (a.options.peak_tflops < 0 || a.options.dram_gbps < 0) fail_bad_input("--peak-tflops and --dram-gbps must be >= 0");
  if (a.options.extremes < 1) fail_bad_input("--top must be >= 1");
  a.options.against = a.against;
  if (a.runs.size() > 1 && a.out.empty())
    fail_bad_input("several runs are reported together from a folder that joins them: give --out NEW_FOLDER");
  const bench::Run run = [&] {
    if (a.out.empty()) return bench::load_run(a.runs.front());
    const auto joined = bench::join_runs({a.runs.begin(), a.runs.end()}, a.out);
    fmt::print("joined {} runs into {}: {} shapes recorded of {}{}\n", a.runs.size(), a.out, joined.run.records.size(),
               joined.run.config.tasks.size(),
               joined.replaced ? fmt::format(" ({} recorded by several: the last run given wins)", joined.replaced) : "");
    return joined.run;
  }();
  const auto files = bench::write_report(run, a.options);
  fmt::print("report: {}\n        {}\n", files.html.string(), files.markdown.string());
  if (const auto versus = bench::search_vs_tune(run)) {
    bench::write_search_vs_tune(*versus, run.dir);
    fmt::print("        {} (search against tune, with its chart)\n", (run.dir / "search_vs_tune.md").string());
  }
}

void add_against_options(CLI::App* cmd, std::string& name, std::string& method) {
  cmd->add_option("--against-name", name, "what the other tool is called in the tables")->capture_default_str();
  cmd->add_option("--against-method", method, "how the other tool measured, stated next to every comparison")
      ->capture_default_str();
}

}  // namespace

void add_bench_report_commands(CLI::App* bench) {
  auto c = std::make_shared<CompareArgs>();
  auto* cmp = bench->add_subcommand("compare", "Shape by shape against another tool's published speedups (a CSV keyed by mnk)");
  cmp->add_option("run", c->run, "a bench suite run folder")->required();
  cmp->add_option("--against", c->against, "the other tool's per-shape CSV, e.g. CUDA-L2's H100 table")->required();
  add_against_options(cmp, c->name, c->method);
  cmp->callback([c] { run_compare(*c); });

  auto r = std::make_shared<ReportArgs>();
  auto* rep = bench->add_subcommand("report", "One self-contained HTML page (and Markdown) from a bench suite run");
  rep->add_option("runs", r->runs, "a bench suite run folder, or several of one protocol to report together (with --out)")
      ->required();
  rep->add_option("--out", r->out,
                  "join the runs into this new folder (a run folder of their tasks and records) and report there");
  rep->add_option("--against", r->against, "also compare with another tool's per-shape CSV");
  add_against_options(rep, r->options.against_name, r->options.against_method);
  rep->add_option("--peak-tflops", r->options.peak_tflops, "the device's peak, when the results hold none (or to override)");
  rep->add_option("--dram-gbps", r->options.dram_gbps, "the device's DRAM bandwidth, for the roofline");
  rep->add_option("--top", r->options.extremes, "worst and best shapes listed")->capture_default_str();
  rep->callback([r] { run_report(*r); });
}

}  // namespace tessera::cli
