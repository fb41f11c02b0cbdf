// `tessera tile`: the tile compiler from the command line (docs/tile.md).
//   emit CONFIG --shape MxNxK      print the generated CUDA source
//   list [--shape] [--limit N]     legal configs of the default space (seeds first)
//   check CONFIG --shape           legality with its reason
//   eval CONFIG --shape            compile, verify and time through the harness
//   tune --shape --budget N        exhaustive or seeded-random search through the harness
#include <algorithm>
#include <cstdio>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/command.hpp"
#include "harness/core/error.hpp"
#include "harness/sandbox.hpp"
#include "harness/tile/config.hpp"
#include "harness/tile/emit.hpp"
#include "harness/tile/legality.hpp"
#include "harness/tile/space.hpp"

namespace tessera::cli {

namespace {

constexpr const char* kDefaultShape = "4096x4096x4096";
constexpr std::size_t kDefaultListLimit = 50;
constexpr int kDefaultTuneBudget = 50;
constexpr int kDefaultTuneTop = 10;
constexpr int kProgressBarWidth = 30;

struct TileArgs {
  std::string config;
  std::string shape = kDefaultShape;
  std::string layout = "TN";
  std::string epilogue = "none";
  std::string arch = "sm_90a";
  int smem_optin = tile::kH100SmemOptinBytes;
  std::size_t limit = kDefaultListLimit;
  int budget = kDefaultTuneBudget;
  int top = kDefaultTuneTop;
  std::uint64_t seed = 1;
  bool json = false;
  bool compile_only = false;
};

Task task_of(const TileArgs& a) { return task_from_shape(a.shape, a.layout, a.epilogue); }

tile::Limits limits_of(const TileArgs& a) {
  tile::Limits l;
  l.arch = a.arch;
  l.smem_optin_bytes = a.smem_optin;
  return l;
}

// A config from the command line takes the task's epilogue unless it names one.
tile::Config config_of(const TileArgs& a, const Task& task) {
  tile::Config c = tile::parse_config(a.config);
  const bool names_epilogue = a.config.find("epilogue\"") != std::string::npos || a.config.find('{') == std::string::npos;
  if (!names_epilogue) c.epilogue = task.epilogue;
  return c;
}

Candidate candidate_of(const tile::Config& c, const Task& task) {
  Candidate cand;
  cand.kind = CandidateKind::device_only;
  cand.source = tile::emit(c, task);
  cand.name = tile::name(c);
  cand.meta["tile_config"] = tile::to_json(c);
  return cand;
}

void print_result_line(const std::string& name, const EvalResult& r) {
  if (r.status == Status::ok) {
    fmt::print("{:<64} {:>9.2f} µs {:>7.1f} TFLOP/s {:>5.1f}% peak  {:.3f}x vs {}\n", name, r.cold.median_us, r.tflops,
               100.0 * r.peak_fraction, r.speedup, r.best_baseline);
  } else {
    fmt::print("{:<64} {}: {}\n", name, to_string(r.status), r.reason);
  }
}

std::unique_ptr<Evaluator> evaluator_of(const TileArgs& a) {
  SandboxOptions o;
  if (a.compile_only) o.mode = "compile_only";
  return make_evaluator(o);
}

void cmd_emit(const TileArgs& a) {
  const Task task = task_of(a);
  fmt::print("{}", tile::emit(config_of(a, task), task));
}

void cmd_check(const TileArgs& a) {
  const Task task = task_of(a);
  const tile::Config c = config_of(a, task);
  const auto l = tile::legality(c, task, limits_of(a));
  if (a.json) {
    fmt::print("{}\n", nlohmann::json{{"name", tile::name(c)}, {"legal", l.ok}, {"reason", l.reason},
                                      {"config", tile::to_json(c)}}
                           .dump(2));
  } else if (l.ok) {
    fmt::print("legal: {} on {} ({}, {} B smem, {} threads)\n", tile::name(c), task.id(), a.arch,
               tile::dynamic_smem_bytes(c, task), c.threads());
  } else {
    fmt::print("illegal: {}: {}\n", tile::name(c), l.reason);
  }
  if (!l.ok) set_exit_code(1);
}

// Seeds first, then the space in enumeration order.
std::vector<tile::Config> listing(const Task& task, const tile::Limits& limits, std::size_t limit) {
  std::vector<tile::Config> out;
  std::set<std::string> seen;
  for (const auto& c : tile::seeds(task, limits))
    if (out.size() < limit && seen.insert(tile::name(c)).second) out.push_back(c);
  for (const auto& c : tile::enumerate(tile::default_space(task, limits), task, limits, limit + seen.size()))
    if (out.size() < limit && seen.insert(tile::name(c)).second) out.push_back(c);
  return out;
}

void cmd_list(const TileArgs& a) {
  const Task task = task_of(a);
  const auto configs = listing(task, limits_of(a), a.limit);
  if (a.json) {
    nlohmann::json j = nlohmann::json::array();
    for (const auto& c : configs) j.push_back({{"name", tile::name(c)}, {"config", tile::to_json(c)}});
    fmt::print("{}\n", j.dump(2));
    return;
  }
  for (const auto& c : configs)
    fmt::print("{:<64} smem {:>6} B  threads {:>3}\n", tile::name(c), tile::dynamic_smem_bytes(c, task), c.threads());
  fmt::print("{} legal configs listed for {} on {} (raw space {})\n", configs.size(), task.id(), a.arch,
             tile::default_space(task, limits_of(a)).raw_size());
}

void cmd_eval(const TileArgs& a) {
  const Task task = task_of(a);
  const tile::Config c = config_of(a, task);
  const auto evaluator = evaluator_of(a);
  EvalOptions opt;
  opt.compile_only = a.compile_only;
  const EvalResult r = evaluator->evaluate(candidate_of(c, task), task, opt);
  if (a.json) {
    nlohmann::json j = r;
    fmt::print("{}\n", j.dump(2));
  } else {
    fmt::print("{} on {} via {}\n", task.id(), evaluator->device().name, evaluator->describe());
    print_result_line(tile::name(c), r);
  }
  if (r.status != Status::ok && r.status != Status::compiled) set_exit_code(1);
}

// The configs a tune run evaluates: all of them when the legal space fits the
// budget, else the seeds and then seeded-random distinct samples.
std::vector<tile::Config> tune_plan(const Task& task, const tile::Limits& limits, int budget, std::uint64_t seed,
                                    bool& exhaustive) {
  const auto space = tile::default_space(task, limits);
  auto all = tile::enumerate(space, task, limits, std::size_t(budget) + 1);
  exhaustive = all.size() <= std::size_t(budget);
  if (exhaustive) return all;
  std::vector<tile::Config> out;
  std::set<std::string> seen;
  for (const auto& c : tile::seeds(task, limits))
    if (int(out.size()) < budget && seen.insert(tile::name(c)).second) out.push_back(c);
  std::mt19937_64 rng(seed);
  for (int misses = 0; int(out.size()) < budget && misses < 50 * budget;) {
    const auto c = tile::sample(space, task, limits, rng);
    if (c && seen.insert(tile::name(*c)).second) out.push_back(*c);
    else ++misses;
  }
  return out;
}

void progress(int done, int total, double best_tflops) {
  const int filled = total > 0 ? done * kProgressBarWidth / total : kProgressBarWidth;
  std::fprintf(stderr, "\r[%s%s] %d/%d  best %.1f TFLOP/s", std::string(filled, '#').c_str(),
               std::string(kProgressBarWidth - filled, '.').c_str(), done, total, best_tflops);
  if (done == total) std::fprintf(stderr, "\n");
}

void cmd_tune(const TileArgs& a) {
  if (a.budget < 1) fail_bad_input("--budget must be >= 1");
  const Task task = task_of(a);
  const auto evaluator = evaluator_of(a);
  tile::Limits limits = limits_of(a);
  if (const auto dev = evaluator->device(); !dev.arch.empty()) {
    limits.arch = dev.arch;
    if (dev.smem_per_block_optin > 0) limits.smem_optin_bytes = dev.smem_per_block_optin;
  }
  bool exhaustive = false;
  const auto plan = tune_plan(task, limits, a.budget, a.seed, exhaustive);
  if (plan.empty()) fail_bad_input(fmt::format("no legal tile config for {} on {}", task.id(), limits.arch));
  std::fprintf(stderr, "tune %s on %s: %zu configs (%s)\n", task.id().c_str(), limits.arch.c_str(), plan.size(),
               exhaustive ? "exhaustive" : "seeds + random");
  EvalOptions opt;
  opt.compile_only = a.compile_only;
  std::vector<std::pair<std::string, EvalResult>> results;
  double best = 0;
  int failures = 0;
  for (std::size_t i = 0; i < plan.size(); ++i) {
    EvalResult r = evaluator->evaluate(candidate_of(plan[i], task), task, opt);
    if (r.status == Status::ok) best = std::max(best, r.tflops);
    else if (r.status != Status::compiled) ++failures;
    results.emplace_back(tile::name(plan[i]), std::move(r));
    progress(int(i + 1), int(plan.size()), best);
  }
  std::stable_sort(results.begin(), results.end(), [](const auto& x, const auto& y) {
    const bool ox = x.second.status == Status::ok, oy = y.second.status == Status::ok;
    if (ox != oy) return ox;
    return ox && x.second.cold.median_us < y.second.cold.median_us;
  });
  if (a.json) {
    nlohmann::json j = nlohmann::json::array();
    for (const auto& [n, r] : results) j.push_back({{"name", n}, {"result", r}});
    fmt::print("{}\n", j.dump(2));
    return;
  }
  fmt::print("best configs for {} ({} evaluated, {} failed):\n", task.id(), results.size(), failures);
  for (int i = 0; i < int(results.size()) && i < a.top; ++i) print_result_line(results[i].first, results[i].second);
}

void add_task_options(CLI::App* c, TileArgs& a) {
  c->add_option("--shape", a.shape, "MxNxK")->capture_default_str();
  c->add_option("--layout", a.layout, "TN or NN")->capture_default_str();
  c->add_option("--epilogue", a.epilogue, "none, bias, bias_relu, bias_gelu")->capture_default_str();
  c->add_option("--arch", a.arch, "target architecture for legality (sm_80, sm_90a ...)")->capture_default_str();
  c->add_flag("--json", a.json, "machine-readable output");
}

void setup(CLI::App& root) {
  auto args = std::make_shared<TileArgs>();
  auto* tile = root.add_subcommand("tile", "the HGEMM tile compiler: emit, list, check, eval, tune");
  tile->require_subcommand(1);

  auto* emit = tile->add_subcommand("emit", "print the CUDA source of a config");
  emit->add_option("config", args->config, "config JSON or name")->required();
  add_task_options(emit, *args);
  emit->callback([args] { cmd_emit(*args); });

  auto* list = tile->add_subcommand("list", "list legal configs (seeds first)");
  add_task_options(list, *args);
  list->add_option("--limit", args->limit, "at most this many")->capture_default_str();
  list->add_option("--smem", args->smem_optin, "opt-in shared memory per block (bytes)")->capture_default_str();
  list->callback([args] { cmd_list(*args); });

  auto* check = tile->add_subcommand("check", "is a config legal for a shape (and why not)");
  check->add_option("config", args->config, "config JSON or name")->required();
  add_task_options(check, *args);
  check->add_option("--smem", args->smem_optin, "opt-in shared memory per block (bytes)")->capture_default_str();
  check->callback([args] { cmd_check(*args); });

  auto* eval = tile->add_subcommand("eval", "compile, verify and time a config through the harness");
  eval->add_option("config", args->config, "config JSON or name")->required();
  add_task_options(eval, *args);
  eval->add_flag("--compile-only", args->compile_only, "compile and check only (no GPU needed)");
  eval->callback([args] { cmd_eval(*args); });

  auto* tune = tile->add_subcommand("tune", "search the space through the harness");
  add_task_options(tune, *args);
  tune->add_option("--budget", args->budget, "configs to evaluate")->capture_default_str();
  tune->add_option("--seed", args->seed, "random seed (sampling when the space exceeds the budget)")->capture_default_str();
  tune->add_option("--top", args->top, "rows in the final table")->capture_default_str();
  tune->add_flag("--compile-only", args->compile_only, "compile and check only (no GPU needed)");
  tune->callback([args] { cmd_tune(*args); });
}

}  // namespace

TESSERA_COMMAND(40, setup);

}  // namespace tessera::cli
