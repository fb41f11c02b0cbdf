// tessera bench harness: end-to-end evaluations per minute through the
// sandbox, first with a cold compile cache, then with the same candidates
// warm. A benchmark, not a test: it prints figures and asserts nothing.
// tessera bench floor and protocol: bench/floor.cpp, bench/protocol.cpp; suite, compare and report: cmd_bench_suite.cpp
// and cmd_bench_report.cpp; scale (over GPUs): cmd_bench_scale.cpp.
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <vector>

#include <fmt/format.h>
#include <unistd.h>

#include "cli/bench_commands.hpp"
#include "bench/floor.hpp"
#include "bench/protocol.hpp"
#include "cli/command.hpp"
#include "cli/sandbox_args.hpp"
#include "cli/task_args.hpp"
#include "core/candidate.hpp"
#include "core/fs.hpp"
#include "core/progress.hpp"
#include "core/stats.hpp"
#include "harness/sandbox.hpp"

namespace {

using tessera::stats::upper_median;

struct Args {
  int count = 30;
  tessera::cli::TaskArgs task;
  tessera::cli::SandboxArgs sandbox;
  bool counters = false;
  std::string counter_set = tessera::kDefaultCounterSet;
  std::string source = TESSERA_SOURCE_DIR "/examples/hgemm_wmma.cu";
  tessera::cli::CompileBatchArgs compile;
};

void run(Args a) {
  if (!a.compile.counts.empty()) {  // compiles only: no worker, no GPU
    a.compile.source = a.source;
    tessera::cli::run_compile_batches(a.compile);
    return;
  }
  if (a.task.shape.empty() && a.task.task_json.empty()) a.task.shape = "1024x1024x1024";
  const auto task = tessera::cli::resolve_task(a.task);
  const auto base = tessera::load_candidate(a.source);
  // Distinct sources (a define the kernel never reads) so each one is a real
  // compile the first time round and a cache hit the second.
  std::vector<tessera::Candidate> cands;
  for (int i = 0; i < a.count; ++i) {
    auto c = base;
    c.source = fmt::format("#define TESSERA_BENCH_VARIANT {}\n{}", i, base.source);
    c.name = fmt::format("variant-{}", i);
    cands.push_back(std::move(c));
  }
  const auto cache = std::filesystem::temp_directory_path() / fmt::format("tessera-bench-{}", ::getpid());
  std::filesystem::remove_all(cache);
  ::setenv("TESSERA_CACHE_DIR", cache.c_str(), 1);
  auto ev = tessera::make_evaluator(tessera::cli::sandbox_options_of(a.sandbox));
  tessera::EvalOptions eo;
  eo.counters = a.counters;
  eo.counter_set = a.counter_set;
  tessera::validate(eo, "options");
  // Start the worker (context, baselines autotune, peak) outside the figures.
  (void)ev->evaluate(cands.front(), task, eo);
  std::filesystem::remove_all(cache / "kernels");

  fmt::print("bench harness: {} candidates, task {} {}, counters {}, on {}\n", a.count, task.shape(),
             tessera::to_string(task.layout), a.counters ? "on (" + eo.counter_set + " set)" : std::string("off"), ev->describe());
  fmt::print("{:<12}{:>7}{:>10}{:>12}{:>16}{:>16}{:>10}\n", "cache", "evals", "wall s", "evals/min", "median compile",
             "median eval", "statuses");
  for (const char* phase : {"cold", "warm"}) {
    std::vector<double> compile_ms, eval_ms;
    std::map<std::string, std::vector<double>> phase_ms;
    std::map<std::string, int> statuses;
    const auto t0 = std::chrono::steady_clock::now();
    tessera::ProgressBar bar("bench harness");
    for (std::size_t i = 0; i < cands.size(); ++i) {
      auto r = ev->evaluate(cands[i], task, eo);
      compile_ms.push_back(r.compile.ms);
      eval_ms.push_back(r.wall_ms);
      for (const auto& [k, v] : r.phase_ms) phase_ms[k].push_back(v);
      ++statuses[tessera::to_string(r.status)];
      bar.update(double(i + 1) / double(cands.size()), fmt::format("{} {}/{}", phase, i + 1, cands.size()));
    }
    bar.clear();
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::string st;
    for (auto& [k, v] : statuses) st += fmt::format("{}{}={}", st.empty() ? "" : ",", k, v);
    fmt::print("{:<12}{:>7}{:>10.1f}{:>12.1f}{:>13.1f} ms{:>13.1f} ms  {}\n", phase, cands.size(), wall,
               60.0 * double(cands.size()) / wall, upper_median(compile_ms), upper_median(eval_ms), st);
    // Where an evaluation's time goes (EvalResult.phase_ms), median per phase.
    std::string phases;
    for (const auto& [k, v] : phase_ms) phases += fmt::format("  {} {:.1f}", k, upper_median(v));
    fmt::print("{:<12}median ms per phase:{}\n", "", phases);
  }
  std::filesystem::remove_all(cache);
}

void setup(CLI::App& root) {
  auto* bench = root.add_subcommand("bench", "Benchmarks (figures, not pass/fail)");
  bench->require_subcommand(1);
  static Args a;
  auto* h = bench->add_subcommand("harness", "End-to-end evaluations per minute, cold and warm compile cache");
  h->add_option("--count", a.count, "distinct candidates per phase")->capture_default_str();
  tessera::cli::add_task_options(h, a.task);
  tessera::cli::add_mode_options(h, a.sandbox);
  h->add_flag("--counters", a.counters, "collect CUPTI counters in every evaluation");
  h->add_option("--counter-set", a.counter_set, "full or fast (what search reads)")->capture_default_str();
  h->add_option("--source", a.source, "device-only candidate to vary")->capture_default_str();
  h->add_option("--compile-batch", a.compile.counts,
                "compiles only: N distinct variants compiled at once, per N (e.g. 16,32), a process per compile "
                "against the compile servers")
      ->delimiter(',');
  h->add_option("--compile-servers", a.compile.servers,
                "with --compile-batch: TESSERA_COMPILE_SERVER values to compare")
      ->delimiter(',')
      ->capture_default_str();
  h->add_option("--variant-at", a.compile.variant_at,
                "with --compile-batch: the variant's define at the 'top', 'after-includes' or 'end'")
      ->capture_default_str();
  h->callback([] { run(a); });
  static tessera::bench::BenchFloorArgs f;
  auto* fl = bench->add_subcommand("floor", "Kernel GPU time of empty and one-DRAM-line kernels under the timing protocol");
  fl->add_option("--device", f.device, "CUDA device ordinal")->capture_default_str();
  fl->add_flag("--json", f.json, "print the figures as JSON");
  fl->callback([] { tessera::bench::run_bench_floor(f); });
  static tessera::bench::BenchProtocolArgs pr;
  auto* prot = bench->add_subcommand("protocol", "The integrity guards' price: each kernel timed plain and guarded, interleaved");
  prot->add_option("--device", pr.device, "CUDA device ordinal")->capture_default_str();
  prot->add_option("--kernel", pr.kernels,
                   "FILE.cu@MxNxK, tile:CONFIG@MxNxK, floor:empty or floor:touch (repeatable; default: the floor "
                   "kernels, a 2-3 us small-grid tile and a 4096^3 tile)");
  prot->add_option("--repeat", pr.repeat, "passes, alternating which variant goes first")->capture_default_str()->check(CLI::Range(1, 50));
  prot->add_flag("--json", pr.json, "print the figures as JSON");
  prot->callback([] { tessera::bench::run_bench_protocol(pr); });
  tessera::cli::add_bench_scale_command(bench);
  tessera::cli::add_bench_suite_command(bench);
  tessera::cli::add_bench_report_commands(bench);
}

}  // namespace

TESSERA_COMMAND(70, setup);
