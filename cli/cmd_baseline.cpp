// `tessera baseline`: times every cuBLAS/cuBLASLt baseline for one shape,
// in-process (baselines do not crash), with the same Timer as candidates.
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/command.hpp"
#include "bench/baseline.hpp"
#include "core/error.hpp"
#include "core/result.hpp"
#include "core/counter_set.hpp"
#include "core/json_read.hpp"

namespace tessera::cli {

namespace {

struct BaselineArgs {
  std::string shape;
  std::string layout = "TN";
  std::string epilogue = "none";
  bool json = false;
  bool remeasure = false;
  bool counters = false;
  int max_algos = baselines::kDefaultAutotuneMaxAlgos;
  int device = 0;
};

using Row = baselines::MeasuredBaseline;

double tflops(const Task& t, const TimingStats& s) {
  return s.status == "measured" && s.median_us > 0 ? t.tflops_at(s.median_us) : 0.0;
}

std::string pct(const nlohmann::json& c, const char* key) {
  return c.contains(key) && c.at(key).is_number() ? fmt::format("{:.1f}", c.at(key).get<double>()) : "-";
}

nlohmann::json row_json(const Task& task, const Row& r) {
  nlohmann::json j = {{"name", r.baseline.name}, {"algo", r.baseline.algo}, {"error", r.baseline.error}};
  if (!r.measured) return j;
  j["verified"] = r.check.passed;
  j["check"] = {{"checked", r.check.checked},
                {"failures", r.check.failures},
                {"max_norm_err", r.check.max_norm_err},
                {"error", r.check.error}};
  j["cold"] = r.cold;
  j["hot"] = r.hot;
  j["tflops"] = tflops(task, r.cold);
  if (!r.counters.is_null()) j["counters"] = r.counters;
  return j;
}

void print_table(const Task& task, const std::string& device, const baselines::BaselineMeasurement& m) {
  const auto& rows = m.rows;
  fmt::print("{} on {} ({:.3g} GFLOP)\n", task.id(), device, task.flops() / 1e9);
  fmt::print("{:<20} {:>10} {:>8} {:>7} {:>9} {:>10} {:>8}  {}\n", "baseline", "cold µs", "spread", "samples",
             "TFLOP/s", "hot µs", "verified", "algo");
  for (const auto& r : rows) {
    if (!r.measured) {
      fmt::print("{:<20} {:>10} {:>8} {:>7} {:>9} {:>10} {:>8}  n/a: {}\n", r.baseline.name, "-", "-", "-", "-", "-",
                 "-", r.baseline.error);
      continue;
    }
    fmt::print("{:<20} {:>10.2f} {:>7.1f}% {:>7} {:>9.1f} {:>10.2f} {:>8}  {}\n", r.baseline.name, r.cold.median_us,
               100.0 * r.cold.rel_spread, r.cold.samples, tflops(task, r.cold), r.hot.median_us,
               r.check.passed ? "yes" : "NO", r.baseline.algo);
    if (!r.check.passed) fmt::print("    check failed: {}\n", r.check.error);
    if (!r.counters.is_null()) {
      if (r.counters.contains("error"))
        fmt::print("    counters: {}\n", r.counters.at("error").get<std::string>());
      else
        fmt::print("    counters: sm {}% dram {}% tensor {}% l2-hit {}% occupancy {}% -> {}\n",
                   pct(r.counters, "sm_throughput_pct"), pct(r.counters, "dram_throughput_pct"),
                   pct(r.counters, "tensor_pipe_pct"), pct(r.counters, "l2_hit_rate_pct"),
                   pct(r.counters, "achieved_occupancy_pct"), bottleneck_hint(r.counters));
    }
  }
  const auto& rep = m.autotune;
  if (rep.value("from_cache", false))
    fmt::print("autotune: cached choice (tuned {}); --remeasure to redo\n", rep.value("tuned_at", std::string("?")));
  else if (rep.contains("tried")) {
    std::string finals;
    for (const auto& t : baselines::autotune_trials(rep))
      if (t.final_us > 0) finals += fmt::format("{}#{} {:.2f} us", finals.empty() ? "" : ", ", t.index, t.final_us);
    fmt::print("autotune: timed {} cuBLASLt algorithms interleaved{}; chose #{}\n", rep.at("tried").size(),
               finals.empty() ? std::string() : "; re-timed the fastest: " + finals, integer_or(rep, "chosen", -1));
  }
  const auto& prev = m.previous_times_us;
  if (!prev.empty()) fmt::print("previous run (display only, not used in any ratio): {}\n", prev.dump());
}

void run_baseline(const BaselineArgs& a) {
  // Bad input is reported as such on any machine, before looking for a GPU.
  const Task task = task_from_shape(a.shape, a.layout, a.epilogue);
  if (a.max_algos < 1) fail_bad_input(fmt::format("--max-algos must be at least 1, got {}", a.max_algos));
  baselines::MeasureOptions mo;
  mo.suite.autotune_max_algos = a.max_algos;
  mo.suite.remeasure = a.remeasure;
  mo.counters = a.counters;
  const bench::BaselineRun run = bench::measure_baselines_here(a.device, task, mo);
  const baselines::BaselineMeasurement& m = run.measurement;

  if (a.json) {
    nlohmann::json out = {{"task", to_json(task)},
                          {"device", run.device},
                          {"baselines", nlohmann::json::array()},
                          {"autotune", m.autotune},
                          {"previous_times_us", m.previous_times_us}};
    for (const auto& r : m.rows) out["baselines"].push_back(row_json(task, r));
    fmt::print("{}\n", out.dump(2));
  } else {
    print_table(task, run.device, m);
  }
  set_exit_code(m.all_verified() ? 0 : 1);
}

void setup(CLI::App& root) {
  auto args = std::make_shared<BaselineArgs>();
  CLI::App* cmd = root.add_subcommand("baseline", "Time the cuBLAS/cuBLASLt baselines for one HGEMM shape");
  cmd->add_option("--shape", args->shape, "MxNxK, e.g. 4096x4096x4096")->required();
  cmd->add_option("--layout", args->layout, "TN (B is N×K row-major) or NN (B is K×N row-major)")
      ->capture_default_str();
  cmd->add_option("--epilogue", args->epilogue, "none, bias, bias_relu or bias_gelu")->capture_default_str();
  cmd->add_flag("--json", args->json, "print a JSON record instead of the table");
  cmd->add_flag("--remeasure", args->remeasure, "ignore the cached cuBLASLt autotune choice and autotune again");
  cmd->add_option("--max-algos", args->max_algos, "cuBLASLt heuristic algorithms timed by the autotuner")
      ->capture_default_str();
  cmd->add_flag("--counters", args->counters, "also read CUPTI hardware counters for each baseline");
  cmd->add_option("--device", args->device, "CUDA device ordinal")->capture_default_str();
  cmd->callback([args] { run_baseline(*args); });
}

}  // namespace

TESSERA_COMMAND(30, setup);

}  // namespace tessera::cli
