// tessera search: evolutionary or bandit search over HGEMM kernels (docs/search.md).
#include <atomic>
#include <cctype>
#include <csignal>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "agent/llm_proposer.hpp"
#include "agent/proposers.hpp"
#include "cli/command.hpp"
#include "cli/task_args.hpp"
#include "harness/core/error.hpp"
#include "harness/core/fs.hpp"
#include "harness/sandbox.hpp"
#include "search/engine.hpp"
#include "search/report.hpp"
#include "search/tasks_file.hpp"

namespace {

using tessera::fail_bad_input;
namespace search = tessera::search;

struct Args {
  tessera::cli::TaskArgs task;
  std::string tasks_file;
  search::SearchConfig config;
  std::string gpus = "0";
  std::string out;
  std::string resume;
  std::string proposers = "tile";
  std::string replay;
  std::string mode = "auto";
  bool compile_only = false;
  bool no_noise_aware = false;
  bool quiet = false;
  CLI::App* cmd = nullptr;
};

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream in(s);
  std::string part;
  while (std::getline(in, part, sep))
    if (!part.empty()) out.push_back(part);
  return out;
}

std::vector<int> parse_gpus(const std::string& s) {
  std::vector<int> out;
  for (const auto& p : split(s, ',')) {
    try {
      std::size_t used = 0;
      const int d = std::stoi(p, &used);
      if (used != p.size() || d < 0) throw std::invalid_argument(p);
      out.push_back(d);
    } catch (const std::exception&) {
      fail_bad_input("--gpus takes device ordinals like 0,1 (got '" + s + "')");
    }
  }
  if (out.empty()) fail_bad_input("--gpus needs at least one device ordinal");
  return out;
}

std::string default_run_id(const search::SearchConfig& c) {
  std::string t = tessera::utc_now_iso();  // 2026-01-02T03:04:05.678Z
  std::string stamp;
  for (char ch : t.substr(0, 19))
    if (std::isdigit(static_cast<unsigned char>(ch))) stamp += ch;
  return fmt::format("{}-{}-{}-s{}", stamp.substr(0, 8), stamp.substr(8), c.method, c.seed);
}

std::vector<search::ProposerSlot> make_proposers(const std::vector<std::string>& names, const std::string& replay,
                                                 std::uint64_t seed, const std::string& arch) {
  std::vector<search::ProposerSlot> slots;
  for (const auto& n : names) {
    search::ProposerSlot s;
    s.name = n;
    if (n == "tile") {
      tessera::agent::TileProposerOptions o;
      o.seed = seed;
      if (!arch.empty()) o.arch = arch;  // the GPU's architecture (sm_80 on Ampere)
      s.proposer = tessera::agent::make_tile_proposer(o);
    } else if (n == "llm") {
      auto o = tessera::agent::llm_proposer_options_from_env();
      if (!o)
        fail_bad_input("--proposers llm needs an endpoint: set TESSERA_LLM_BASE_URL and TESSERA_LLM_MODEL (docs/agent.md)");
      // One model arm per ensemble member: the bandit's arms are (strategy x model).
      s.models.clear();
      for (const auto& e : o->endpoints) s.models.push_back(e.label());
      if (s.models.empty()) s.models.push_back("");
      s.proposer = tessera::agent::make_llm_proposer(std::move(*o));
    } else if (n == "replay") {
      if (replay.empty()) fail_bad_input("the replay proposer needs --replay PATH (a trajectories.jsonl)");
      s.proposer = tessera::agent::make_replay_proposer(replay);
    } else {
      fail_bad_input("unknown proposer '" + n + "' (tile | llm | replay)");
    }
    slots.push_back(std::move(s));
  }
  if (slots.empty()) fail_bad_input("--proposers needs at least one of tile, llm, replay");
  return slots;
}

std::atomic<search::SearchEngine*> g_engine{nullptr};

extern "C" void on_interrupt(int) {
  if (auto* e = g_engine.load()) e->request_stop();
  std::signal(SIGINT, SIG_DFL);  // a second Ctrl-C ends the process
}

void run(Args& a) {
  search::SearchConfig config = a.config;
  std::vector<tessera::Task> tasks;
  std::filesystem::path dir;
  nlohmann::json extra;
  if (!a.resume.empty()) {
    dir = a.resume;
    const auto file = search::load_run_config(dir);
    const search::Budget asked = config.budget;
    config = file.config;
    // Budgets may change on resume; nothing else does.
    if (a.cmd->count("--budget-evals")) config.budget.evals = asked.evals;
    if (a.cmd->count("--budget-seconds")) config.budget.seconds = asked.seconds;
    if (a.cmd->count("--budget-tokens")) config.budget.tokens = asked.tokens;
    if (a.cmd->count("--budget-usd")) config.budget.usd = asked.usd;
    if (a.cmd->count("--stop-at-peak")) config.budget.stop_at_peak_fraction = asked.stop_at_peak_fraction;
    tasks = file.tasks;
    extra = file.extra;
    a.proposers = extra.value("proposers", a.proposers);
    a.replay = extra.value("replay", a.replay);
    if (!a.cmd->count("--gpus")) a.gpus = extra.value("gpus", a.gpus);
    a.mode = extra.value("mode", a.mode);
  } else {
    if (!a.tasks_file.empty()) {
      if (!a.task.task_json.empty() || !a.task.shape.empty()) fail_bad_input("give --tasks or --task/--shape, not both");
      tasks = search::load_tasks_file(a.tasks_file);
    } else {
      tasks = {tessera::cli::resolve_task(a.task)};
    }
    config.noise_aware = !a.no_noise_aware;
    if (a.compile_only) a.mode = "compile_only";
    std::string why;
    if (a.mode == "auto" && !tessera::gpu_present(&why)) {
      std::fprintf(stderr, "tessera search: no GPU (%s): COMPILE-ONLY mode: kernels are compiled and checked, not "
                           "verified or timed; no speedup will be claimed\n", why.c_str());
      a.mode = "compile_only";
    }
    if (a.mode != "auto" && a.mode != "full" && a.mode != "compile_only")
      fail_bad_input("--mode must be auto, full or compile_only");
    config.compile_only = a.mode == "compile_only";
    if (config.run_id.empty()) config.run_id = default_run_id(config);
    dir = a.out.empty() ? std::filesystem::path("runs") / config.run_id : std::filesystem::path(a.out);
    if (std::filesystem::exists(search::config_path(dir)))
      fail_bad_input(dir.string() + " already holds a run; resume it with --resume " + dir.string());
    extra = {{"proposers", a.proposers}, {"replay", a.replay}, {"gpus", a.gpus}, {"mode", a.mode}};
  }
  if (a.replay.empty() && a.proposers.find("replay") != std::string::npos)
    fail_bad_input("--proposers replay needs --replay PATH");
  if (!a.replay.empty() && a.proposers.find("replay") == std::string::npos) a.proposers += ",replay";
  extra["proposers"] = a.proposers;
  config.validate();

  std::vector<std::unique_ptr<tessera::Evaluator>> evaluators;
  for (int d : parse_gpus(a.gpus)) {
    tessera::SandboxOptions so;
    so.mode = config.compile_only ? "compile_only" : a.mode;
    so.device = d;
    evaluators.push_back(tessera::make_evaluator(so));
  }
  auto slots = make_proposers(split(a.proposers, ','), a.replay, config.seed, evaluators.front()->device().arch);
  std::fprintf(stderr, "tessera search: %s, %zu task(s), proposers %s, %zu evaluator(s): %s\n  run directory %s\n",
               config.method.c_str(), tasks.size(), a.proposers.c_str(), evaluators.size(),
               evaluators.front()->describe().c_str(), dir.string().c_str());

  auto progress = search::make_progress(stderr);
  search::EngineOptions opts;
  opts.run_dir = dir;
  opts.progress = a.quiet ? nullptr : progress.get();
  opts.extra = extra;
  search::SearchEngine engine(config, tasks, std::move(slots), std::move(evaluators), opts);
  g_engine = &engine;
  std::signal(SIGINT, on_interrupt);
  search::RunSummary summary;
  try {
    summary = engine.run();
  } catch (...) {
    g_engine = nullptr;
    throw;
  }
  g_engine = nullptr;
  std::signal(SIGINT, SIG_DFL);

  const auto view = search::load_run(dir);
  const auto report = search::write_report(view);
  fmt::print("stopped: {} after {} steps, {} evaluations ({:.0f} s){}\n", summary.stop_reason, summary.totals.steps,
             summary.totals.evaluations, summary.elapsed_s,
             summary.resumed_steps ? fmt::format(", {} steps resumed", summary.resumed_steps) : "");
  fmt::print("{}", search::final_summary(view));
  if (config.compile_only)
    fmt::print("COMPILE-ONLY run: nothing was verified or timed on a GPU; the numbers above are not measurements.\n");
  fmt::print("report: {}\ntrajectories: {}\n", report.string(), search::trajectories_path(dir).string());
}

void setup(CLI::App& root) {
  static Args a;
  auto* cmd = root.add_subcommand("search", "Search for faster HGEMM kernels (evolutionary or bandit), logging trajectories");
  a.cmd = cmd;
  tessera::cli::add_task_options(cmd, a.task);
  cmd->add_option("--tasks", a.tasks_file, "task file, e.g. datasets/small_grid.json (tasks are visited round-robin)");
  cmd->add_option("--method", a.config.method, "evolve or bandit")->capture_default_str();
  cmd->add_option("--budget-evals", a.config.budget.evals, "search steps (harness calls, re-measurements aside)")
      ->capture_default_str();
  cmd->add_option("--budget-seconds", a.config.budget.seconds, "wall time limit (0 = none)");
  cmd->add_option("--budget-tokens", a.config.budget.tokens, "LLM token limit (0 = none)");
  cmd->add_option("--budget-usd", a.config.budget.usd, "LLM cost limit in USD (0 = none)");
  cmd->add_option("--stop-at-peak", a.config.budget.stop_at_peak_fraction,
                  "stop once the best kernel reaches this fraction of the measured peak (0 = off)");
  cmd->add_option("--seed", a.config.seed, "seed of every search decision")->capture_default_str();
  cmd->add_option("--gpus", a.gpus, "CUDA devices, one evaluation worker each, e.g. 0,1")->capture_default_str();
  cmd->add_option("--out,--run-dir", a.out, "run directory (default runs/<run-id>)");
  cmd->add_option("--run-id", a.config.run_id, "run id (default: time, method and seed)");
  cmd->add_option("--resume", a.resume, "resume the run in this directory (same seed and decisions)");
  cmd->add_option("--proposers", a.proposers, "comma-separated: tile, llm (needs TESSERA_LLM_* env), replay")
      ->capture_default_str();
  cmd->add_option("--replay", a.replay, "replay the actions of this trajectories.jsonl (adds the replay proposer)");
  cmd->add_option("--mode", a.mode, "auto, full or compile_only")->capture_default_str();
  cmd->add_flag("--compile-only", a.compile_only, "compile and check candidates only (no GPU needed, nothing timed)");
  a.config.counter_set = "fast";  // read for every candidate: the cheap set (docs/counters.md)
  cmd->add_option("--counter-set", a.config.counter_set,
                  "CUPTI counters read per candidate: fast (2 profiler passes on H100) or full (9)")
      ->capture_default_str();
  cmd->add_option("--bandit-rule", a.config.bandit_rule, "ucb1 or thompson")->capture_default_str();
  cmd->add_option("--bandit-cost", a.config.bandit_cost, "none, tokens or seconds (cost-aware bandit)")
      ->capture_default_str();
  cmd->add_option("--islands", a.config.islands, "islands per task")->capture_default_str();
  cmd->add_option("--selection", a.config.selection, "tournament or fitness_weighted")->capture_default_str();
  cmd->add_option("--exploration-ratio", a.config.exploration_ratio, "parent drawn uniformly")->capture_default_str();
  cmd->add_option("--elite-ratio", a.config.elite_ratio, "parent drawn from the MAP-Elites archive")
      ->capture_default_str();
  cmd->add_option("--pipeline-depth", a.config.pipeline_depth, "steps in flight (0 = 2 per GPU)")->capture_default_str();
  cmd->add_option("--temperature", a.config.temperature, "LLM sampling temperature (<0: endpoint default)");
  cmd->add_flag("--no-noise-aware", a.no_noise_aware, "accept any faster median (ablation of noise-aware acceptance)");
  cmd->add_flag("--quiet", a.quiet, "no progress output");
  cmd->callback([] { run(a); });
}

TESSERA_COMMAND(50, setup);

}  // namespace
