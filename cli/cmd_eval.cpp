// tessera eval FILE.cu...: compile, verify and time candidates in the sandbox.
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "bench/model_data.hpp"
#include "cli/build_args.hpp"
#include "cli/command.hpp"
#include "cli/result_print.hpp"
#include "cli/sandbox_args.hpp"
#include "cli/task_args.hpp"
#include "core/fs.hpp"
#include "harness/candidate_build.hpp"
#include "harness/sandbox.hpp"
#include "tile/emit.hpp"
#include "tile/learned_model.hpp"
#include "tile/legality.hpp"

namespace {

struct Args {
  std::vector<std::string> files;
  tessera::cli::TaskArgs task;
  tessera::BuildOptions build;
  std::string kind = "auto";
  tessera::cli::SandboxArgs sandbox;
  bool json = false;
  bool no_counters = false;
  std::string counter_set = tessera::kDefaultCounterSet;
  bool no_baselines = false;
  bool no_timing = false;
  int trials = tessera::kDefaultVerifyTrials;
  int device = 0;
  bool remeasure = false;
  double compile_timeout = tessera::kCompileTimeoutSeconds;
  double heartbeat_timeout = tessera::kWorkerHeartbeatTimeoutSeconds;
  std::string rows;  // the cost model's rows of the timed tile kernels appended here (.jsonl)
};

// The cost model's row of a timed kernel (has_cold_time), when the candidate is the tile
// compiler's unedited output for the task (tile::emitted_config).
std::optional<tessera::tile::Measurement> row_of(const tessera::Candidate& c, const tessera::EvalResult& r,
                                                 const tessera::Task& task, const tessera::DeviceSummary& device) {
  const auto config = tessera::tile::emitted_config(c.source, task);
  if (!config) return std::nullopt;
  return tessera::tile::Measurement{task, *config, tessera::tile::with_device(tessera::tile::Limits{}, device),
                                    tessera::tile::device_kind(device.name), r.cold.median_us};
}

void run(const Args& a) {
  const tessera::Task task = tessera::cli::resolve_task(a.task);
  if (!a.rows.empty()) {  // before any work
    tessera::bench::check_rows_file_name(a.rows, "--rows");
    if (!std::ofstream(a.rows, std::ios::app)) tessera::fail_bad_input(fmt::format("--rows {}: cannot be written", a.rows));
  }
  std::vector<tessera::Candidate> cands;
  for (const auto& f : a.files)  // bad files fail before any work
    cands.push_back(tessera::load_candidate_with(f, a.kind, a.build));
  tessera::SandboxOptions flags;
  flags.device = a.device;
  flags.remeasure_baselines = a.remeasure;
  flags.compile_timeout_s = a.compile_timeout;
  flags.heartbeat_timeout_s = a.heartbeat_timeout;
  flags.measure_peak = !a.no_timing;
  const tessera::SandboxOptions so = tessera::cli::sandbox_options_of(a.sandbox, flags);
  tessera::EvalOptions eo;
  eo.counters = !a.no_counters;
  eo.counter_set = a.counter_set;
  eo.baselines = !a.no_baselines;
  eo.timing = !a.no_timing;
  eo.verify_trials = a.trials;
  tessera::validate(eo, "options");  // a bad counter set or trial count: exit 2
  auto ev = tessera::make_evaluator(so);
  int code = 0, rows = 0, not_tile = 0;
  for (std::size_t i = 0; i < cands.size(); ++i) {
    if (!a.json && cands.size() > 1) std::fprintf(stderr, "[%zu/%zu] %s\n", i + 1, cands.size(), cands[i].name.c_str());
    auto r = ev->evaluate(cands[i], task, eo);
    if (a.json) {
      fmt::print("{}\n", nlohmann::json(r).dump(cands.size() > 1 ? -1 : 2));
    } else {
      fmt::print("{}{}", i ? "\n" : "", tessera::cli::format_result(r));
    }
    std::fflush(stdout);
    code = std::max(code, tessera::cli::exit_code_for(r.status));
    if (a.rows.empty() || !tessera::has_cold_time(r)) continue;
    if (const auto row = row_of(cands[i], r, task, ev->device())) {
      tessera::append_line_durable(a.rows, tessera::tile::to_json(*row).dump());  // kept if a later kernel fails
      ++rows;
    } else {
      ++not_tile;
    }
  }
  if (!a.rows.empty()) {
    std::fprintf(stderr, "%d training rows appended to %s%s\n", rows, a.rows.c_str(),
                 rows ? " (tessera tile model train|eval read it)" : " (no tile kernel was timed)");
    if (not_tile)
      std::fprintf(stderr, "%d timed kernels have no row: not the tile compiler's unedited output for %s\n", not_tile,
                   task.id().c_str());
  }
  if (!a.json) fmt::print("\nevaluated on: {}\n", ev->describe());
  tessera::cli::set_exit_code(code);
}

void setup(CLI::App& root) {
  static Args a;
  auto* cmd = root.add_subcommand("eval", "Compile, verify and time candidate kernels against cuBLAS (sandboxed)");
  cmd->add_option("files", a.files, "candidate .cu files (device-only or translation unit, docs/abi.md)")->required();
  tessera::cli::add_task_options(cmd, a.task);
  cmd->add_option("--kind", a.kind, "auto, device_only (device) or translation_unit (tu)")->capture_default_str();
  tessera::cli::add_build_options(cmd, a.build);
  tessera::cli::add_mode_options(cmd, a.sandbox);
  tessera::cli::add_sandbox_options(cmd, a.sandbox);
  cmd->add_flag("--json", a.json, "print the result record(s) as JSON");
  cmd->add_flag("--no-counters", a.no_counters, "skip CUPTI counters");
  cmd->add_option("--counter-set", a.counter_set, "full (9 profiler passes on H100) or fast (2; what search reads)")
      ->capture_default_str();
  cmd->add_flag("--no-timing", a.no_timing, "verify only: nothing timed (for compute-sanitizer runs)");
  cmd->add_flag("--no-baselines", a.no_baselines, "skip cuBLAS/cuBLASLt (no speedup)");
  cmd->add_option("--trials", a.trials, "random verification trials (plus one integer-exact trial)")->capture_default_str();
  cmd->add_option("--device", a.device, "CUDA device ordinal")->capture_default_str();
  cmd->add_flag("--remeasure-baselines", a.remeasure, "ignore the cached cuBLASLt autotune choice");
  cmd->add_option("--compile-timeout", a.compile_timeout, "seconds one compile may take")->capture_default_str();
  cmd->add_option("--rows", a.rows,
                  "append every timed tile kernel (tile emit's output, unedited) as a cost-model training row to this "
                  ".jsonl file (tile model train reads it)");
  cmd->add_option("--run-timeout", a.heartbeat_timeout, "seconds a candidate may run without progress")
      ->capture_default_str();
  cmd->callback([] { run(a); });
}

}  // namespace

TESSERA_COMMAND(20, setup);
