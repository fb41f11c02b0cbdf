// `tessera bench scale`: evaluations per minute over 1, 2, ..., N GPUs
// through the pool, `tessera serve` and (asked) `tessera search`, with where
// each evaluation's time went and what the GPUs did (docs/scaling.md). The
// library is bench/scale.hpp; this file turns options into ScaleOptions and
// prints the figures.

#include <cstdio>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "bench/scale.hpp"
#include "cli/bench_commands.hpp"
#include "cli/sandbox_args.hpp"
#include "core/candidate.hpp"
#include "core/error.hpp"
#include "core/fs.hpp"
#include "harness/sandbox.hpp"
#include "serve/evaluator_slots.hpp"

namespace tessera::cli {

namespace {

constexpr const char* kDefaultShape = "2048x2048x2048";

struct ScaleArgs {
  std::string gpus = "all";
  std::vector<int> counts;  // empty: 1, 2, ..., every device given
  std::vector<std::string> shapes;
  std::vector<std::string> paths = {"pool", "serve"};
  int count = bench::kDefaultScalePerGpu;
  int clients = bench::kDefaultScaleClients;
  bool warm_cache = false;
  bool counters = false;
  std::string counter_set = kDefaultCounterSet;
  std::string source = TESSERA_SOURCE_DIR "/examples/hgemm_wmma.cu";
  std::string json;
  bool no_progress = false;
  SandboxArgs sandbox;
};

bench::ScaleOptions options_of(const ScaleArgs& a) {
  bench::ScaleOptions o;
  o.sandbox = sandbox_options_of(a.sandbox);
  // As `tessera serve --gpus`: without a GPU (or in compile-only mode) any
  // ordinals name compile-only slots, and "all" is one.
  o.devices = serve::parse_gpu_list(a.gpus, o.sandbox.mode == EvalMode::compile_only ? 0 : cuda_device_count());
  o.counts = a.counts;
  if (o.counts.empty())
    for (int k = 1; k <= int(o.devices.size()); ++k) o.counts.push_back(k);
  for (const auto& s : a.shapes.empty() ? std::vector<std::string>{kDefaultShape} : a.shapes)
    o.tasks.push_back(task_from_shape(s));
  o.paths.clear();
  for (const auto& p : a.paths) o.paths.push_back(bench::parse_scale_path(p));
  o.per_gpu = a.count;
  o.clients = a.clients;
  o.warm_cache = a.warm_cache;
  o.eval.counters = a.counters;
  o.eval.counter_set = a.counter_set;
  o.source = a.source;
  o.progress = !a.no_progress;
  return o;
}

void run(const ScaleArgs& a) {
  const bench::ScaleOptions o = options_of(a);
  bench::validate(o);
  (void)load_candidate(o.source);  // a missing or unreadable source is bad input before anything starts
  std::vector<std::string> paths, shapes;
  for (auto p : o.paths) paths.push_back(bench::to_string(p));
  for (const auto& t : o.tasks) shapes.push_back(t.shape());
  fmt::print("bench scale: {} over GPUs {} (counts {}), {}, {} candidates per GPU, {} compile cache, counters {}\n",
             fmt::join(paths, ","), fmt::join(o.devices, ","), fmt::join(o.counts, ","), fmt::join(shapes, ","),
             o.per_gpu, o.warm_cache ? "warm (every kernel compiled before the figures)" : "cold (emptied before each point)",
             o.eval.counters ? "on (" + o.eval.counter_set + " set)" : std::string("off"));
  std::fflush(stdout);
  const bench::ScaleReport report = bench::run_scale(o);

  if (report.mode == "compile_only")
    fmt::print("\nCOMPILE-ONLY: nothing was verified or timed on a GPU; the figures measure compiles and the "
               "harness, not GPUs.\n");
  fmt::print("\n{}\n", to_markdown(bench::points_table(report)));
  fmt::print("p50 (mean) ms per stage of an evaluation (docs/scaling.md, \"The stages\"):\n\n{}\n",
             to_markdown(bench::stages_table(report)));
  fmt::print("The candidates' cold timings (the timer stops on noise: wandering clocks take more samples):\n\n{}\n",
             to_markdown(bench::cold_table(report)));
  fmt::print("GPUs during each point's evaluations (NVML every {:.0f} ms: {}):\n\n{}\n", 1000 * o.sample_period_s,
             report.nvml, to_markdown(bench::gpus_table(report)));
  for (const auto& p : report.points)
    if (!p.note.empty()) fmt::print("note, {} {} on {} GPU(s): {}\n", p.path, p.shape, p.gpus, p.note);
  if (!a.json.empty()) {
    atomic_write_file(a.json, nlohmann::json(report).dump(1) + "\n");
    fmt::print("figures: {}\n", a.json);
  }
}

}  // namespace

void add_bench_scale_command(CLI::App* bench) {
  static ScaleArgs a;
  auto* s = bench->add_subcommand(
      "scale", "Evaluations per minute over 1..N GPUs (pool, serve, search), with a per-stage breakdown and GPU clocks");
  s->add_option("--gpus", a.gpus, "'all' or device ordinals like 0,1,2,3; a point with k GPUs uses the first k")
      ->capture_default_str();
  s->add_option("--counts", a.counts, "GPU counts to measure, e.g. 1,2,4 (default: 1, 2, ..., every GPU given)")
      ->delimiter(',');
  s->add_option("--shape", a.shapes, "task shape MxNxK (repeatable or a comma list; default " + std::string(kDefaultShape) + ")")
      ->delimiter(',');
  s->add_option("--path", a.paths, "pool, serve, search (repeatable or a comma list)")->delimiter(',')->capture_default_str();
  s->add_option("--count", a.count, "distinct candidates per GPU of a point (k GPUs evaluate k times as many)")
      ->capture_default_str();
  s->add_option("--clients", a.clients, "serve path: concurrent HTTP clients")->capture_default_str();
  s->add_flag("--warm-cache", a.warm_cache, "compile every candidate before a point's figures (default: a cold cache)");
  s->add_flag("--counters", a.counters, "collect CUPTI counters in every evaluation");
  s->add_option("--counter-set", a.counter_set, "full or fast")->capture_default_str();
  s->add_option("--source", a.source, "device-only candidate to vary")->capture_default_str();
  s->add_option("--json", a.json, "write every figure here (a ScaleReport)");
  s->add_flag("--no-progress", a.no_progress, "no progress bar on stderr");
  add_mode_options(s, a.sandbox);
  add_sandbox_options(s, a.sandbox);
  s->callback([] { run(a); });
}

}  // namespace tessera::cli
