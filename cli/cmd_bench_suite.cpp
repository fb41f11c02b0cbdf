// `tessera bench suite`: the baselines, and optionally a kernel per shape,
// over a task file, resumable (docs/bench.md). The library is bench/; this
// file turns options into a run folder, a measurer and a sweep.
#include <chrono>
#include <csignal>
#include <cstdio>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "bench/buckets.hpp"
#include "bench/claims.hpp"
#include "bench/deadline_evaluator.hpp"
#include "bench/kernels.hpp"
#include "bench/measure.hpp"
#include "bench/run.hpp"
#include "bench/search_vs_tune.hpp"
#include "bench/suite.hpp"
#include "bench/table.hpp"
#include "cli/bench_commands.hpp"
#include "cli/bench_suite_gpus.hpp"
#include "cli/build_args.hpp"
#include "cli/command.hpp"
#include "cli/sandbox_args.hpp"
#include "core/error.hpp"
#include "core/fs.hpp"
#include "core/task.hpp"
#include "harness/sandbox.hpp"
#include "core/tasks_file.hpp"
#include "serve/evaluator_slots.hpp"

namespace tessera::cli {

namespace {

struct SuiteArgs {
  std::string tasks_file;
  std::string kernels = "none";
  std::string out;
  std::string resume;
  BuildOptions build;
  // search:N's search lends each shape's first baseline timing to its later
  // evaluations unless --no-reuse-baselines (measured: the same configs then
  // time as the tune's sweep times them); other kernels ignore it.
  bench::MeasureSettings measure{.reuse_baselines = true};
  SandboxArgs sandbox;  // --mode full (the default) or compile_only, --compile-only
  double max_minutes = 0;
  bool no_progress = false;
  std::vector<std::string> retry;  // kernel statuses whose shapes are measured again
  std::vector<std::string> buckets;  // --bucket: only the task file's shapes in these buckets
  std::vector<std::string> shapes;   // --shape: only these of the task file, or these alone
  std::string gpus;                // --gpus: "all" or ordinals; shapes spread over them
  std::string claims;              // --claims DIR: a --gpus child's shared queue (bench/claims.hpp)
  std::string kept_searches;       // --kept-searches DIR: where a --gpus child keeps searches (the run's search/)
  CLI::Option* device_option = nullptr;
};

std::atomic<bool> g_stop{false};

// First Ctrl-C: finish the shape being measured, then stop; a second one ends the process.
void on_interrupt(int) {
  g_stop = true;
  std::signal(SIGINT, SIG_DFL);
}

std::string default_out(const bench::RunConfig& config, const bench::KernelSource& source) {
  std::string stamp = utc_now_iso().substr(0, 19);
  for (char& c : stamp)
    if (c == ':') c = '-';
  const std::string kind = source.spec().substr(0, source.spec().find(':'));
  const auto buckets = config.options.value("buckets", std::vector<std::string>{});
  const std::string set = buckets.empty() ? config.task_set : fmt::format("{}-{}", config.task_set, fmt::join(buckets, "+"));
  return fmt::format("runs/bench-{}-{}-{}", set, kind, stamp);
}

// --bucket: the tasks of these buckets only, each name one of the file's
// buckets. Kept in the run's options (sorted), so that --resume and a run
// continued with the same arguments measure the same shapes.
void keep_buckets(bench::RunConfig& c, const std::vector<std::string>& names) {
  if (names.empty()) return;
  std::set<std::string> known, wanted(names.begin(), names.end());
  for (const auto& b : c.buckets) known.insert(b.name);
  const std::string from = c.tasks_file.empty() ? "--shape" : c.tasks_file;
  for (const auto& n : wanted)
    if (!known.count(n)) fail_bad_input(fmt::format("--bucket {}: the buckets of {} are {}", n, from, fmt::join(known, ", ")));
  std::vector<Task> kept;
  for (const auto& t : c.tasks)
    if (wanted.count(bench::bucket_of(t, c.buckets))) kept.push_back(t);
  if (kept.empty()) fail_bad_input(fmt::format("no task of {} is in bucket {}", from, fmt::join(wanted, " or ")));
  c.tasks = std::move(kept);
  c.options["buckets"] = std::vector<std::string>(wanted.begin(), wanted.end());
}

// --shape: with a task file, its tasks of these shapes (an MxNxK picks every
// task of those dimensions, a task id that task), each shape one of the file's;
// without, these shapes themselves (layout TN, no epilogue). Kept in the run's
// options (sorted, so the flags' order does not make another run), so that
// --resume measures the same shapes: e.g. the shapes a cut sweep did not reach,
// on another machine.
void keep_shapes(bench::RunConfig& c, const std::vector<std::string>& shapes) {
  if (shapes.empty()) return;
  std::vector<Task> alone;            // without a task file
  std::set<std::string> ids, given;  // the tasks picked; the shapes by their key
  for (const auto& s : shapes) {
    const Task want = task_from_shape(s);  // a bad shape is one clear line
    const bool dims_only = s.find('_') == std::string::npos;
    const std::string key = dims_only ? fmt::format("{}x{}x{}", want.m, want.n, want.k) : want.id();
    if (!given.insert(key).second) fail_bad_input(fmt::format("--shape {}: given twice", s));
    if (c.tasks_file.empty()) {  // an MxNxK and its task id are one task here
      if (!ids.insert(want.id()).second) fail_bad_input(fmt::format("--shape {}: given twice", s));
      alone.push_back(want);
      continue;
    }
    bool found = false;
    for (const auto& t : c.tasks)
      if (dims_only ? t.m == want.m && t.n == want.n && t.k == want.k : t.id() == want.id()) {
        ids.insert(t.id());
        found = true;
      }
    if (!found) fail_bad_input(fmt::format("--shape {}: no task of {} has that shape", s, c.tasks_file));
  }
  if (c.tasks_file.empty()) {
    c.tasks = std::move(alone);
  } else {  // the file's order, not the flags'
    std::vector<Task> kept;
    for (const auto& t : c.tasks)
      if (ids.count(t.id())) kept.push_back(t);
    c.tasks = std::move(kept);
  }
  c.options["shapes"] = std::vector<std::string>(given.begin(), given.end());
}

// The run's config from the arguments (a new run, or one to continue with the same ones).
bench::RunConfig config_from_args(const SuiteArgs& a, const bench::KernelSource& source) {
  bench::RunConfig c;
  c.tasks_file = a.tasks_file;
  if (a.tasks_file.empty()) {  // --shape alone
    c.buckets = bench::default_buckets();
    c.task_set = "shapes";
  } else {
    c.tasks = load_tasks_file(a.tasks_file);
    c.buckets = bench::load_buckets(a.tasks_file);
    const auto j = nlohmann::json::parse(read_file(a.tasks_file), nullptr, false);
    c.task_set = j.is_object() && j.contains("name") && j.at("name").is_string()
                     ? j.at("name").get<std::string>()
                     : std::filesystem::path(a.tasks_file).stem().string();
  }
  c.kernels = source.spec();
  c.options = {{"measure", a.measure.to_json()}, {"build", to_json(a.build)}};
  keep_shapes(c, a.shapes);
  keep_buckets(c, a.buckets);
  c.created_at = utc_now_iso();
  return c;
}

// --resume DIR: the run's own tasks, kernels and options.
void arguments_from_run(SuiteArgs& a) {
  if (!a.tasks_file.empty() || a.kernels != "none" || !a.out.empty() || !a.build.empty() || !a.buckets.empty() ||
      !a.shapes.empty())
    fail_bad_input(
        "--resume continues a run with its own arguments: give no --tasks, --shape, --kernels, --out, --bucket or build "
        "options");
  const bench::Run run = bench::load_run(a.resume);
  const auto& c = run.config;
  a.tasks_file = c.tasks_file;
  a.kernels = c.kernels;
  a.out = a.resume;
  a.buckets = c.options.value("buckets", std::vector<std::string>{});
  a.shapes = c.options.value("shapes", std::vector<std::string>{});
  const auto& m = c.options.value("measure", nlohmann::json::object());
  a.measure.hot = m.value("hot", false);
  a.measure.counters = m.value("counters", false);
  a.measure.max_timing_ms = m.value("max_timing_ms", 0.0);
  a.measure.max_algos = m.value("max_algos", a.measure.max_algos);
  a.measure.compile_only = m.value("compile_only", false);
  a.measure.reuse_baselines = m.value("reuse_baselines", false);
  const auto& b = c.options.value("build", nlohmann::json::object());
  a.build.include_dirs = b.value("include_dirs", std::vector<std::string>{});
  a.build.nvcc_flags = b.value("nvcc_flags", std::vector<std::string>{});
  a.build.torch_entry = b.value("torch_entry", "");
}

// The buckets, search against tune, and how to go on: the end of every sweep.
void print_summary(const std::string& out, int total, int measured, bool complete, const std::string& stopped_because,
                   const std::string& resume_extra) {
  const bench::Run run = bench::load_run(out);
  const auto rows = bench::shape_rows(run.records);
  fmt::print("{}", bench::buckets_markdown(bench::summarize(run, rows)));
  if (const auto versus = bench::search_vs_tune(run)) fmt::print("\n{}", bench::write_search_vs_tune(*versus, out));
  fmt::print("\n{} of {} shapes recorded in {} ({} this session); tables: shapes.csv, buckets.csv, summary.json\n",
             run.records.size(), total, out, measured);
  if (!complete) {
    fmt::print("stopped: {}; continue with: tessera bench suite --resume {}{}\n", stopped_because, out, resume_extra);
    set_exit_code(kExitStoppedEarly);
  } else {
    fmt::print("report: tessera bench report {}\n", out);
  }
}

// What every child of a --gpus sweep is given besides its tasks, folder and GPU.
std::vector<std::string> child_arguments(const SuiteArgs& a) {
  std::vector<std::string> v = {"--kernels", a.kernels};
  if (a.measure.compile_only) v.push_back("--compile-only");
  else v.insert(v.end(), {"--mode", "full"});
  if (a.measure.hot) v.push_back("--hot");
  if (a.measure.counters) v.push_back("--counters");
  if (a.measure.remeasure) v.push_back("--remeasure");
  v.push_back(a.measure.reuse_baselines ? "--reuse-baselines" : "--no-reuse-baselines");
  if (a.measure.max_timing_ms > 0) v.insert(v.end(), {"--max-timing-ms", fmt::format("{}", a.measure.max_timing_ms)});
  v.insert(v.end(), {"--max-algos", std::to_string(a.measure.max_algos)});
  if (a.max_minutes > 0) v.insert(v.end(), {"--max-minutes", fmt::format("{}", a.max_minutes)});
  for (const auto& d : a.build.include_dirs) v.insert(v.end(), {"--include-dir", d});
  for (const auto& f : a.build.nvcc_flags) v.insert(v.end(), {"--nvcc-flag", f});
  if (!a.build.torch_entry.empty()) v.insert(v.end(), {"--torch-entry", a.build.torch_entry});
  return v;
}

// Says what the writer repaired, and reopens the shapes --retry names.
void prepare_writer(bench::RunWriter& writer, const std::set<std::string>& retry) {
  if (!writer.repair_note().empty()) std::fprintf(stderr, "bench: %s\n", writer.repair_note().c_str());
  if (!retry.empty()) {
    const auto ids = writer.reopen(retry);
    std::fprintf(stderr, "bench: %zu shape(s) measured again (--retry): their earlier records stay in %s, superseded\n",
                 ids.size(), bench::kResultsFile);
  }
}

// --gpus with two or more GPUs: a child sweep per GPU (cli/bench_suite_gpus.hpp).
void run_on_gpus(const SuiteArgs& a, const bench::KernelSource& source, const bench::RunConfig& config,
                 const std::vector<int>& devices, const std::set<std::string>& retry) {
  const std::string out = a.out.empty() ? default_out(config, source) : a.out;
  bench::RunWriter writer(out, config);
  prepare_writer(writer, retry);
  const std::string list = fmt::format("{}", fmt::join(devices, ","));
  std::fprintf(stderr,
               "bench suite: %zu tasks from %s (%s), kernels %s, spread over GPUs %s (a process each)\n%s %s: %zu of "
               "them already done\n",
               config.tasks.size(), config.tasks_file.c_str(), config.task_set.c_str(), config.kernels.c_str(),
               list.c_str(), writer.resumed() ? "continuing" : "new run", out.c_str(), writer.finished().size());
  g_stop = false;
  std::signal(SIGINT, on_interrupt);
  const GpuSweepOutcome o = run_suite_on_gpus(writer, config, {devices, child_arguments(a), !a.no_progress}, g_stop);
  std::signal(SIGINT, SIG_DFL);
  const bench::Run merged = bench::load_run(out);
  bench::write_tables(merged, bench::resolve_ceiling(merged.records));
  std::string why;
  for (const auto& s : o.stopped) why += (why.empty() ? "" : "; ") + s;
  if (!o.complete && why.empty()) why = g_stop ? "interrupted" : "shapes left";
  print_summary(out, int(config.tasks.size()), o.measured, o.complete, why, " --gpus " + list);
}

void run_suite_command(SuiteArgs a) {
  // A sweep is never silently compile-only: auto is not one of its modes.
  const EvalMode mode = mode_of(a.sandbox);
  if (mode == EvalMode::auto_detect)
    fail_bad_input("bench suite measures in --mode full or compile_only (--compile-only), never auto");
  a.measure.compile_only = mode == EvalMode::compile_only;
  if (!a.resume.empty()) arguments_from_run(a);
  if (a.tasks_file.empty() && a.shapes.empty())
    fail_bad_input("no tasks: give --tasks FILE (e.g. datasets/grid1000.json), --shape MxNxK or --resume DIR");
  if (a.max_minutes < 0) fail_bad_input("--max-minutes must be >= 0");
  if (a.measure.max_timing_ms < 0) fail_bad_input("--max-timing-ms must be >= 0");
  if (a.measure.max_algos < 1) fail_bad_input("--max-algos must be >= 1");
  const bench::KernelSource source = bench::parse_kernel_source(a.kernels);
  // Only a search times baselines it could reuse: other sweeps keep no such option in bench.json.
  if (source.kind != bench::KernelSourceKind::search) a.measure.reuse_baselines = false;
  (void)build_arguments(a.build);  // bad folders and flags fail before any work
  if (!a.build.empty() && source.kind != bench::KernelSourceKind::run && source.kind != bench::KernelSourceKind::dir &&
      source.kind != bench::KernelSourceKind::file)
    fail_bad_input("--include-dir, --nvcc-flag and --torch-entry apply to kernel files (--kernels run:, dir: or file:)");
  std::set<std::string> retry;
  for (const auto& st : a.retry) {
    if (parse_status(st) == Status::ok) fail_bad_input("--retry ok: a verified and timed kernel is not measured again");
    retry.insert(st);
  }
  if (!retry.empty() && source.kind == bench::KernelSourceKind::none)
    fail_bad_input("--retry applies to kernel sweeps: a baselines-only sweep has no kernel status");
  const bench::RunConfig config = config_from_args(a, source);
  bench::check_covers_some(source, config.tasks);
  if (source.kind == bench::KernelSourceKind::none && a.measure.compile_only)
    fail_bad_input("--compile-only needs kernels to compile: --kernels none only times the baselines, on a GPU");
  // Before the run folder is made: a missing claims folder leaves nothing behind.
  std::optional<bench::TaskClaims> claims;
  if (!a.claims.empty()) {
    if (!a.gpus.empty()) fail_bad_input("--claims is what --gpus gives each of its children: give one of them");
    claims.emplace(a.claims);
  }
  if (!a.gpus.empty()) {
    if (a.device_option && a.device_option->count() > 0) fail_bad_input("give --device or --gpus, not both");
    const int available = cuda_device_count();
    // Before the run folder is made, as with one GPU: no folder is left behind.
    if (available == 0 && !a.measure.compile_only)
      throw Error(Error::Kind::unavailable,
                  "no CUDA GPU: --gpus " + a.gpus + " measures on GPUs (--compile-only compiles without one)");
    // A compile-only sweep touches no GPU: its ordinals only name the children,
    // so they are not checked against this machine ('all' still counts its GPUs).
    const bool any_ordinal = a.measure.compile_only && a.gpus != "all";
    const std::vector<int> devices = serve::parse_gpu_list(a.gpus, any_ordinal ? 0 : available);
    // Two sweeps on one GPU would time each other's kernels, and share its child folder.
    if (std::set<int>(devices.begin(), devices.end()).size() != devices.size())
      fail_bad_input("--gpus " + a.gpus + " names a GPU twice: one sweep process per GPU");
    if (devices.size() > 1) return run_on_gpus(a, source, config, devices, retry);
    a.measure.device = devices.front();
  }

  std::unique_ptr<Evaluator> evaluator;
  std::unique_ptr<bench::DeadlineEvaluator> bounded;  // the evaluator, cut off at --max-minutes
  std::unique_ptr<bench::ShapeMeasurer> measurer;
  if (source.kind == bench::KernelSourceKind::none) {
    measurer = bench::make_baseline_measurer(a.measure);
  } else {
    SandboxOptions so;
    so.mode = a.measure.compile_only ? EvalMode::compile_only : EvalMode::full;  // never a silent compile-only sweep
    so.device = a.measure.device;
    so.remeasure_baselines = a.measure.remeasure;
    so.autotune_max_algos = a.measure.max_algos;
    evaluator = make_evaluator(so);
    evaluator->start();  // the worker reports the device, which the header line names
    bounded = std::make_unique<bench::DeadlineEvaluator>(*evaluator);
  }
  // The run folder after the evaluator: no GPU (or a bad --device) leaves no folder behind.
  const std::string out = a.out.empty() ? default_out(config, source) : a.out;
  if (source.kind == bench::KernelSourceKind::tile)
    measurer = bench::make_tile_measurer(*bounded, source.budget, a.measure);
  else if (source.kind == bench::KernelSourceKind::search)
    measurer = bench::make_search_measurer(*bounded, source, a.measure, std::filesystem::path(out) / "search",
                                           [&bounded] { return bounded->cut(); }, a.kept_searches);
  else if (source.kind != bench::KernelSourceKind::none)
    measurer = bench::make_file_measurer(*bounded, source, a.build, a.measure);
  bench::RunWriter writer(out, config);
  prepare_writer(writer, retry);
  std::fprintf(stderr, "bench suite: %zu tasks from %s (%s), kernels %s, on %s\n%s %s: %zu of them already done\n",
               config.tasks.size(), config.tasks_file.c_str(), config.task_set.c_str(), config.kernels.c_str(),
               measurer->describe().c_str(), writer.resumed() ? "continuing" : "new run", out.c_str(),
               writer.finished().size());

  g_stop = false;
  std::signal(SIGINT, on_interrupt);
  bench::SuiteOptions so;
  so.max_minutes = a.max_minutes;
  if (bounded && a.max_minutes > 0) {  // the suite's clock starts now too
    bounded->set_deadline(bench::DeadlineEvaluator::Clock::now() +
                          std::chrono::duration_cast<bench::DeadlineEvaluator::Clock::duration>(
                              std::chrono::duration<double, std::ratio<60>>(a.max_minutes)));
    so.cut = [&bounded] { return bounded->cut(); };
  }
  so.progress = !a.no_progress;
  if (claims) so.claim = [&claims](const Task& t) { return claims->claim(t); };
  const bench::SuiteOutcome outcome = bench::run_suite(writer, config, *measurer, so, g_stop);
  std::signal(SIGINT, SIG_DFL);

  print_summary(out, outcome.total, outcome.measured, outcome.complete, outcome.stopped_because, "");
}

}  // namespace

void add_bench_suite_command(CLI::App* bench) {
  auto a = std::make_shared<SuiteArgs>();
  auto* cmd = bench->add_subcommand("suite", "Baselines (and kernels) over a task file, resumable, CSV/JSON out");
  cmd->add_option("--tasks", a->tasks_file, "task file, e.g. datasets/grid1000.json (datasets/README.md)");
  cmd->add_option("--kernels", a->kernels,
                  "none (baselines only), tile:BUDGET (tile-tuned per shape), search:BUDGET[:evolve|bandit][:alone] "
                  "(searched per shape, beside tile:BUDGET unless alone), run:DIR (a search run's best kernels), "
                  "dir:DIR (a kernel per shape: <task id>.cu, MxNxK.cu or M_N_K.cu), file:FILE.cu (one for all)")
      ->capture_default_str();
  cmd->add_option("--out", a->out, "run folder (default runs/bench-<tasks>-<kernels>-<time>); an existing run "
                                   "folder with the same arguments is continued");
  cmd->add_option("--resume", a->resume, "continue the run in this folder with its own arguments");
  add_build_options(cmd, a->build);
  cmd->add_flag("--hot", a->measure.hot, "also time warm back-to-back launches and host latency (slower)");
  cmd->add_flag("--counters", a->measure.counters, "CUPTI counters for every kernel or baseline (slower)");
  cmd->add_option("--max-timing-ms", a->measure.max_timing_ms,
                  "baselines-only sweeps: cap each cold measurement at this many ms (default: the protocol's 2000)");
  cmd->add_option("--max-algos", a->measure.max_algos, "cuBLASLt algorithms the autotuner times")->capture_default_str();
  cmd->add_flag("--remeasure", a->measure.remeasure, "autotune cuBLASLt again instead of using the cached choice");
  cmd->add_flag("--reuse-baselines,!--no-reuse-baselines", a->measure.reuse_baselines,
                "search:N: the search times the baselines on a shape's first evaluation only and ranks the rest "
                "against them, as tile:N's sweep ranks by cold time alone (the default; --no-reuse-baselines "
                "times them beside every evaluation); the confirmation times them beside the kernel, as always");
  cmd->add_option("--max-minutes", a->max_minutes, "stop after this long: between shapes, or cutting the shape in flight short, unrecorded; a shape the recorded ones say would not fit in the minutes left is not started, a later one that would is (exit 5; run again to continue)");
  cmd->add_option("--shape", a->shapes,
                  "MxNxK or a task id: only the task file's tasks of this shape, or without --tasks this shape "
                  "(layout TN; repeatable)");
  cmd->add_option("--bucket", a->buckets,
                  "only the task file's shapes in this size bucket (small, medium, large, or the file's own; repeatable)");
  add_mode_options(cmd, a->sandbox, EvalMode::full);
  a->device_option = cmd->add_option("--device", a->measure.device, "CUDA device ordinal")->capture_default_str();
  cmd->add_option("--gpus", a->gpus,
                  "all or ordinals like 0,1: the shapes spread over these GPUs, each shape wholly on one (a bench "
                  "suite process per GPU; records name their GPU)");
  // No group: not in --help. The parent of a --gpus sweep gives it to each child.
  cmd->add_option("--claims", a->claims, "a --gpus child: measure only the tasks claimed first in this folder")
      ->group("");
  cmd->add_option("--kept-searches", a->kept_searches,
                  "a --gpus child: keep the searches of shapes cut in their tune in this folder (the run's), and "
                  "start a shape from one kept there")
      ->group("");
  cmd->add_flag("--no-progress", a->no_progress, "no progress bar");
  cmd->add_option("--retry", a->retry,
                  "measure again the shapes whose kernel ended with this status, e.g. timeout (repeatable; with "
                  "--resume or the run's own arguments)");
  cmd->callback([a] { run_suite_command(*a); });
}

}  // namespace tessera::cli
