// tessera search: evolutionary or bandit search over HGEMM kernels (docs/search.md).
#include <atomic>
#include <optional>
#include <cctype>
#include <csignal>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "agent/llm_proposer.hpp"
#include "agent/proposers.hpp"
#include "agent/registry.hpp"
#include "cli/command.hpp"
#include "cli/sandbox_args.hpp"
#include "cli/task_args.hpp"
#include "core/error.hpp"
#include "core/fs.hpp"
#include "harness/sandbox.hpp"
#include "search/engine.hpp"
#include "search/report.hpp"
#include "core/tasks_file.hpp"

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
  std::string endpoints_file;
  tessera::cli::SandboxArgs sandbox;
  bool no_noise_aware = false;
  bool reuse_baselines = false;
  bool quiet = false;
  double far_slower = 0;  // 0: the tile proposer's own bound
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

bool has_proposer(const std::string& list, const std::string& name) {
  for (const auto& n : split(list, ','))
    if (n == name) return true;
  return false;
}

// The run's LLM endpoints: --config, else those the run recorded (a resume
// needs no environment), else TESSERA_LLM_* (docs/agent.md).
std::optional<tessera::agent::LlmProposerOptions> llm_options(const Args& a, const nlohmann::json& recorded) {
  if (!a.endpoints_file.empty())
    return tessera::agent::llm_proposer_options(tessera::agent::load_endpoint_configs(a.endpoints_file));
  if (recorded.is_object() && recorded.contains("endpoints")) return tessera::agent::llm_options_from_record(recorded);
  return tessera::agent::llm_proposer_options_from_env();
}

// A cost budget is kept by pricing each call before it is sent: every model
// must have a price. Replayed replies cost nothing, so replay mode needs none.
void check_priced(const tessera::agent::LlmProposerOptions& o, double budget_usd) {
  if (budget_usd <= 0 || o.cache_mode == tessera::agent::CacheMode::replay) return;
  const auto& prices = o.client.prices ? *o.client.prices : tessera::agent::PriceTable::builtin();
  for (const auto& e : o.endpoints)
    if (!prices.find(e.model))
      fail_bad_input(fmt::format("--budget-usd needs the price of every model, and '{}' (endpoint '{}') is not in the "
                                 "price table: add it to a table named by $TESSERA_PRICES (docs/agent.md), or limit "
                                 "--budget-tokens instead",
                                 e.model, e.label()));
}

// After start(): a worker that could not start leaves the device unknown,
// which is said in words rather than as empty fields.
std::string describe_evaluator(const tessera::Evaluator& e, bool compile_only) {
  if (!compile_only && e.device().name.empty())
    return "device unknown: its worker did not start (the first evaluation will say why)";
  return e.describe();
}

std::vector<search::ProposerSlot> make_proposers(const std::string& names, tessera::agent::ProposerOptions options) {
  std::vector<search::ProposerSlot> slots;
  for (auto& built : tessera::agent::ProposerRegistry::builtin().build_all(split(names, ','), options))
    slots.push_back(search::make_slot(std::move(built)));
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
  nlohmann::json recorded_llm;
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
    a.far_slower = extra.value("far_slower", 0.0);  // the run's own bound, whatever --far-slower says now
    if (!a.cmd->count("--gpus")) a.gpus = extra.value("gpus", a.gpus);
    a.sandbox.mode = extra.value("mode", a.sandbox.mode);  // the run's own mode, whatever --mode says now
    a.sandbox.compile_only = false;
    recorded_llm = extra.value("llm", nlohmann::json());
  } else {
    if (!a.tasks_file.empty()) {
      if (!a.task.task_json.empty() || !a.task.shape.empty()) fail_bad_input("give --tasks or --task/--shape, not both");
      tasks = tessera::load_tasks_file(a.tasks_file);
    } else {
      tasks = {tessera::cli::resolve_task(a.task)};
    }
    config.noise_aware = !a.no_noise_aware;
    config.reuse_baselines = a.reuse_baselines;
    tessera::EvalMode mode = tessera::cli::mode_of(a.sandbox);
    std::string why;
    if (mode == tessera::EvalMode::auto_detect && !tessera::gpu_present(&why)) {
      std::fprintf(stderr, "tessera search: no GPU (%s): COMPILE-ONLY mode: kernels are compiled and checked, not "
                           "verified or timed; no speedup will be claimed\n", why.c_str());
      mode = tessera::EvalMode::compile_only;
    }
    a.sandbox.mode = tessera::to_string(mode);
    a.sandbox.compile_only = false;
    config.compile_only = mode == tessera::EvalMode::compile_only;
    if (config.run_id.empty()) config.run_id = default_run_id(config);
    dir = a.out.empty() ? std::filesystem::path("runs") / config.run_id : std::filesystem::path(a.out);
    if (std::filesystem::exists(search::config_path(dir)))
      fail_bad_input(dir.string() + " already holds a run; resume it with --resume " + dir.string());
    // Endpoints given: the LLM proposes, unless --proposers says otherwise.
    if (!a.endpoints_file.empty() && !a.cmd->count("--proposers")) a.proposers = "llm";
    extra = {{"proposers", a.proposers}, {"replay", a.replay}, {"gpus", a.gpus}, {"mode", a.sandbox.mode}};
    // Checked when given, not by value: 0 would otherwise pass as "the default" unannounced.
    if (a.cmd->count("--far-slower")) {
      if (!(a.far_slower >= 1)) fail_bad_input(fmt::format("--far-slower {} must be at least 1 (a multiple of the "
                                                           "incumbent's predicted time)", a.far_slower));
      extra["far_slower"] = a.far_slower;
    }
  }
  if (!a.endpoints_file.empty() && !has_proposer(a.proposers, "llm"))
    fail_bad_input("--config gives LLM endpoints, but the proposers (" + a.proposers + ") do not include llm");
  if (a.replay.empty() && a.proposers.find("replay") != std::string::npos)
    fail_bad_input("--proposers replay needs --replay PATH");
  if (!a.replay.empty() && a.proposers.find("replay") == std::string::npos) a.proposers += ",replay";
  extra["proposers"] = a.proposers;
  config.validate();

  std::vector<std::unique_ptr<tessera::Evaluator>> evaluators;
  for (int d : parse_gpus(a.gpus)) {
    tessera::SandboxOptions so = tessera::cli::sandbox_options_of(a.sandbox);
    if (config.compile_only) so.mode = tessera::EvalMode::compile_only;
    so.device = d;
    evaluators.push_back(tessera::make_evaluator(so));
  }
  // The worker reports the device: the banner and the tile proposer's arch need it.
  for (auto& e : evaluators) e->start();
  auto spend = std::make_shared<tessera::agent::Budget>(config.budget.tokens, config.budget.usd);
  tessera::agent::ProposerOptions po;
  po.seed = config.seed;
  po.arch = evaluators.front()->device().arch;
  po.replay = a.replay;
  po.far_slower = a.far_slower;
  if (has_proposer(a.proposers, "llm")) {
    po.llm = llm_options(a, recorded_llm);
    if (po.llm) {
      check_priced(*po.llm, config.budget.usd);
      po.llm->budget = spend;
      extra["llm"] = tessera::agent::llm_options_record(*po.llm);
    }
  }
  auto slots = make_proposers(a.proposers, std::move(po));
  std::fprintf(stderr, "tessera search: %s, %zu task(s), proposers %s, %zu evaluator(s): %s\n  run directory %s\n",
               config.method.c_str(), tasks.size(), a.proposers.c_str(), evaluators.size(),
               describe_evaluator(*evaluators.front(), config.compile_only).c_str(), dir.string().c_str());

  auto progress = search::make_progress(stderr, a.quiet);
  search::EngineOptions opts;
  opts.run_dir = dir;
  opts.progress = progress.get();
  opts.extra = extra;
  opts.spend = spend;
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
  if (summary.stop_reason == "proposer_errors") {
    std::fprintf(stderr, "tessera search: stopped because a proposer kept failing with errors no retry can fix (above); "
                         "fix the endpoint and continue with --resume %s\n", dir.string().c_str());
    tessera::cli::set_exit_code(1);
  }
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
  cmd->add_option("--proposers", a.proposers,
                  "comma-separated: tile, llm (needs --config or TESSERA_LLM_* env), replay (default: tile; llm with --config)")
      ->capture_default_str();
  cmd->add_option("--config", a.endpoints_file,
                  "LLM endpoint file: one endpoint or {\"endpoints\": [...]}, an ensemble whose models are arms (docs/agent.md)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--replay", a.replay, "replay the actions of this trajectories.jsonl (adds the replay proposer)");
  tessera::cli::add_mode_options(cmd, a.sandbox);
  tessera::cli::add_sandbox_options(cmd, a.sandbox);
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
  cmd->add_option("--far-slower", a.far_slower,
                  fmt::format("tile proposer: a move predicted slower than this multiple of the incumbent's "
                              "predicted time gives way to the model's next pick, except as exploration (default {})",
                              tessera::agent::TileProposerOptions{}.far_slower));
  cmd->add_flag("--no-noise-aware", a.no_noise_aware, "accept any faster median (ablation of noise-aware acceptance)");
  cmd->add_flag("--reuse-baselines,!--no-reuse-baselines", a.reuse_baselines,
                "time the baselines on each task's first evaluation only and rank the rest against them "
                "(default: --no-reuse-baselines, beside every evaluation)");
  // --no-progress as in bench suite and bench scale; --quiet, its first spelling, still works.
  cmd->add_flag("--no-progress,--quiet", a.quiet, "no progress output");
  cmd->callback([] { run(a); });
}

TESSERA_COMMAND(50, setup);

}  // namespace
