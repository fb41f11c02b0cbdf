#pragma once
// The search loop. One controller thread plans steps and applies their
// outcomes strictly in step order; proposals run on a thread pool; each
// evaluator has its own thread and never runs two evaluations at once (GPU
// timing is never shared). Step s is planned from the state after step
// s - pipeline_depth, so the decisions do not depend on thread timing.
//
// Durability: every finished evaluation is appended (fsync'd) to
// outcomes.jsonl at once, and every applied step to trajectories.jsonl. On
// start the engine replays both: applied steps rebuild the state, finished
// but unapplied evaluations are reused, and only the rest runs live.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "agent/accounting.hpp"
#include "core/lent_baselines.hpp"
#include "harness/evaluator.hpp"
#include "harness/pool.hpp"
#include "search/config.hpp"
#include "search/method.hpp"
#include "search/progress.hpp"
#include "search/slots.hpp"
#include "search/state.hpp"

namespace tessera::search {

}  // namespace tessera::search

namespace tessera {
class ThreadPool;
}

namespace tessera::search {

struct EngineOptions {
  std::filesystem::path run_dir;
  EvalOptions eval;                    // compile_only is taken from the config
  ProgressSink* progress = nullptr;    // not owned; null: no progress, messages on stderr
  // Test hook that simulates a crash: stop after applying this many steps in
  // this session, abandoning the steps in flight. -1: off.
  long long halt_after_steps = -1;
  nlohmann::json extra = nlohmann::json::object();  // kept in config.json (e.g. the CLI's proposer options)
  // The budget the LLM clients reserve each call's worst case against. The
  // steps read back from the run directory are charged to it, so a resumed
  // run keeps the limits of the whole run. Null: the proposers spend freely
  // (the step budgets below still apply).
  std::shared_ptr<agent::Budget> spend;
};

struct RunSummary {
  // budget_evals | budget_seconds | budget_tokens | budget_usd | peak_fraction |
  // proposer_errors (kMaxPermanentFailuresInARow) | stopped | halted
  std::string stop_reason;
  Totals totals;
  long long resumed_steps = 0;  // steps replayed from the run directory
  long long reused_outcomes = 0;  // finished evaluations reused without re-running
  double elapsed_s = 0;
  std::filesystem::path run_dir;
};

class SearchEngine {
public:
  SearchEngine(SearchConfig config, std::vector<Task> tasks, std::vector<ProposerSlot> slots,
               std::vector<std::unique_ptr<Evaluator>> evaluators, EngineOptions options);
  ~SearchEngine();
  SearchEngine(const SearchEngine&) = delete;
  SearchEngine& operator=(const SearchEngine&) = delete;

  RunSummary run();
  // Stop planning new steps; the steps in flight finish and are recorded.
  void request_stop() { stop_requested_ = true; }

  const SearchState& state() const { return *state_; }
  const SearchMethod& method() const { return *method_; }
  const SearchConfig& config() const { return config_; }

private:
  struct Slot {
    Plan plan;
    agent::ProposalContext context;
    int attempt = 0;
    bool proposing = false;
    std::optional<agent::Proposal> proposal;
    agent::Usage usage;  // all attempts
    nlohmann::json rejects = nlohmann::json::array();
    bool dispatched = false;
    std::optional<StepOutcome> outcome;
    nlohmann::json timestamps = nlohmann::json::object();
  };

  void prepare_run_dir();
  void load_logs();
  std::optional<std::string> budget_exhausted(long long step) const;
  void plan_more();
  void submit_proposal(long long step);
  bool dispatch_ready();
  void note_failure(long long step, const Slot& slot);
  void reask_after_repeat(long long step, Slot& slot, long long repeated_step);
  void say(const std::string& line) const;
  bool apply_ready();
  void run_evaluation(Evaluator& ev, int evaluator, StepOutcome outcome, Task task, Plan plan);
  ProgressSnapshot snapshot() const;
  bool work_in_flight() const;
  std::string describe_slots() const;
  double elapsed() const;

  SearchConfig config_;
  std::vector<Task> tasks_;
  std::vector<ProposerSlot> slots_info_;
  EngineOptions options_;
  std::unique_ptr<SearchState> state_;
  std::unique_ptr<SearchMethod> method_;
  agent::GpuInfo gpu_;

  std::map<long long, nlohmann::json> recorded_;          // applied steps from trajectories.jsonl
  std::map<long long, StepOutcome> recorded_outcomes_;    // finished evaluations from outcomes.jsonl
  std::map<std::string, long long> novelty_;              // dispatch-time novelty index
  std::map<long long, Slot> slots_;
  std::vector<bool> busy_;
  std::vector<int> permanent_in_a_row_;  // per proposer: failures no retry can fix, in step order
  std::vector<std::string> last_permanent_error_;  // per proposer: shown in full once, then "again"
  long long next_plan_ = 0, next_dispatch_ = 0, next_apply_ = 0;
  long long applied_this_session_ = 0;
  std::optional<std::string> stop_reason_;
  bool halted_ = false;
  RunSummary summary_;
  double elapsed_offset_s_ = 0;
  std::chrono::steady_clock::time_point started_;
  std::atomic<bool> stop_requested_{false};

  std::mutex mu_;
  std::condition_variable cv_;
  unsigned long long events_ = 0;
  std::mutex file_mu_;
  std::mutex baselines_mu_;
  std::map<std::string, BaselineRecord> lent_baselines_;  // reuse_baselines: per task and evaluator, the first

  // Declared last: destroyed first, so no job outlives the members it uses.
  std::unique_ptr<tessera::ThreadPool> proposal_pool_;
  std::unique_ptr<EvaluatorPool> pool_;  // one thread per evaluator
};

// runs/<id>/config.json as written by the engine.
struct RunConfigFile {
  SearchConfig config;
  std::vector<Task> tasks;
  nlohmann::json proposers = nlohmann::json::array();
  nlohmann::json extra = nlohmann::json::object();
};
RunConfigFile load_run_config(const std::filesystem::path& run_dir);  // throws bad_input

// Paths inside a run directory.
std::filesystem::path config_path(const std::filesystem::path& run_dir);
std::filesystem::path trajectories_path(const std::filesystem::path& run_dir);
std::filesystem::path outcomes_path(const std::filesystem::path& run_dir);

}  // namespace tessera::search
