#include "search/engine.hpp"

#include <cstdio>

#include <spdlog/spdlog.h>

#include "agent/proposer.hpp"
#include "core/error.hpp"
#include "core/fs.hpp"
#include "core/json_read.hpp"
#include "core/thread_pool.hpp"
#include "search/novelty.hpp"
#include "search/run_files.hpp"
#include "search/trajectory.hpp"

namespace tessera::search {

namespace fs = std::filesystem;

fs::path config_path(const fs::path& run_dir) { return run_dir / "config.json"; }
fs::path trajectories_path(const fs::path& run_dir) { return run_dir / "trajectories.jsonl"; }
fs::path outcomes_path(const fs::path& run_dir) { return run_dir / "outcomes.jsonl"; }

namespace {

constexpr auto kControllerWakeInterval = std::chrono::milliseconds(200);  // re-checks stop requests and wall time
constexpr int kPipelinePerEvaluator = 2;  // steps in flight per evaluator: one measured, one being proposed

// The parts of a config that decide what a run does (budgets may change on resume).
nlohmann::json decision_config(const SearchConfig& c) {
  nlohmann::json j = c;
  j.erase("budget");
  j.erase("run_id");
  return j;
}

nlohmann::json tasks_json(const std::vector<Task>& tasks) {
  nlohmann::json j = nlohmann::json::array();
  for (const auto& t : tasks) j.push_back(to_json(t));
  return j;
}

// Rewrites a JSONL file to its first `bytes` bytes (drops a torn last line).
void truncate_to(const fs::path& path, std::size_t bytes) {
  std::error_code ec;
  if (!fs::exists(path, ec) || fs::file_size(path, ec) == bytes) return;
  const std::string text = read_file(path);
  atomic_write_file(path, std::string_view(text).substr(0, bytes));
}

agent::Evaluated evaluated(const IndividualPtr& i) { return {i->candidate, i->result}; }

agent::Measured measured(const IndividualPtr& i) {
  const auto& r = i->result;
  return {i->candidate.name, i->candidate.meta, r.status, has_cold_time(r) ? r.cold.median_us : 0.0};
}

bool is_masked(const StepOutcome& o) { return o.evaluated && o.result.status == Status::infra_error; }

// What a step cost, for a cost-aware bandit: thousands of tokens, or seconds
// of proposal latency plus evaluation.
double step_cost(const std::string& bandit_cost, const StepOutcome& o) {
  if (bandit_cost == "tokens") return double(o.usage.prompt_tokens + o.usage.completion_tokens) / 1000.0;
  if (bandit_cost == "seconds") return (o.usage.latency_ms + (o.evaluated ? o.result.wall_ms : 0.0)) / 1000.0;
  return 0;
}

}  // namespace

RunConfigFile load_run_config(const fs::path& run_dir) {
  const fs::path p = config_path(run_dir);
  if (!fs::exists(p)) fail_bad_input("no search run at " + run_dir.string() + " (config.json missing)");
  RunConfigFile out;
  try {
    const auto j = nlohmann::json::parse(read_file(p));
    out.config = j.at("config").get<SearchConfig>();
    for (const auto& t : j.at("tasks")) out.tasks.push_back(parse_task(t));
    out.proposers = j.value("proposers", nlohmann::json::array());
    out.extra = j.value("extra", nlohmann::json::object());
  } catch (const nlohmann::json::exception& e) {
    fail_bad_input(p.string() + ": not a tessera search config: " + e.what());
  }
  return out;
}

SearchEngine::SearchEngine(SearchConfig config, std::vector<Task> tasks, std::vector<ProposerSlot> slots,
                           std::vector<std::unique_ptr<Evaluator>> evaluators, EngineOptions options)
    : config_(std::move(config)),
      tasks_(std::move(tasks)),
      slots_info_(std::move(slots)),
      options_(std::move(options)) {
  if (tasks_.empty()) fail_bad_input("a search needs at least one task");
  if (slots_info_.empty()) fail_bad_input("a search needs at least one proposer");
  if (evaluators.empty()) fail_bad_input("a search needs at least one evaluator");
  for (const auto& s : slots_info_) TESSERA_REQUIRE(s.proposer && s.lock, "proposer slot without a proposer");
  config_.validate();
  pool_ = std::make_unique<EvaluatorPool>(std::move(evaluators));
  if (config_.pipeline_depth == 0) config_.pipeline_depth = kPipelinePerEvaluator * int(pool_->size());
  if (config_.proposers.empty())
    for (const auto& s : slots_info_) config_.proposers.push_back(s.name);
  state_ = std::make_unique<SearchState>(tasks_, config_);
  method_ = make_method(config_, slots_info_);
  gpu_ = agent::gpu_info(pool_->evaluator(0).device());
  busy_.assign(pool_->size(), false);
  permanent_in_a_row_.assign(slots_info_.size(), 0);
  last_permanent_error_.assign(slots_info_.size(), std::string());
}

SearchEngine::~SearchEngine() {
  // Jobs in flight post into members below; stop them first. Proposal jobs
  // call pool_->evaluator(0).compile_ahead, so they end while pool_ is set.
  proposal_pool_.reset();
  pool_.reset();
}

double SearchEngine::elapsed() const {
  return elapsed_offset_s_ + std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
}

void SearchEngine::prepare_run_dir() {
  const fs::path dir = options_.run_dir;
  if (dir.empty()) fail_bad_input("the search needs a run directory");
  fs::create_directories(dir);
  if (fs::exists(config_path(dir))) {
    const RunConfigFile old = load_run_config(dir);
    if (decision_config(old.config) != decision_config(config_) || tasks_json(old.tasks) != tasks_json(tasks_))
      fail_bad_input(dir.string() + " holds a different search (config or tasks differ); resume it with --resume " +
                     dir.string() + " or choose another --out");
  }
  nlohmann::json proposers = nlohmann::json::array();
  for (const auto& s : slots_info_) {
    nlohmann::json strategies = nlohmann::json::array();
    for (const auto& a : (s.strategies.empty() ? default_strategies(s.name) : s.strategies))
      strategies.push_back({{"name", a.name}, {"target", a.target}});
    proposers.push_back({{"name", s.name}, {"models", s.models}, {"strategies", strategies}});
  }
  nlohmann::json evaluators = nlohmann::json::array();
  for (std::size_t e = 0; e < pool_->size(); ++e) evaluators.push_back(pool_->evaluator(e).describe());
  const nlohmann::json j = {{"schema", "tessera.search_config/1"}, {"config", config_},
                            {"tasks", tasks_json(tasks_)},          {"proposers", proposers},
                            {"evaluators", evaluators},             {"extra", options_.extra},
                            {"written_at", utc_now_iso()}};
  atomic_write_file(config_path(dir), j.dump(2) + "\n");
}

void SearchEngine::load_logs() {
  std::size_t good = 0;
  auto records = read_jsonl(trajectories_path(options_.run_dir), &good);
  truncate_to(trajectories_path(options_.run_dir), good);
  for (auto& r : records) {
    const long long step = integer_value<long long>(r, "step", -1);
    if (step != (long long)recorded_.size())
      throw Error(Error::Kind::bad_input, trajectories_path(options_.run_dir).string() +
                                              ": steps are not consecutive at step " + std::to_string(step));
    if (r.contains("totals")) elapsed_offset_s_ = r["totals"].value("elapsed_s", elapsed_offset_s_);
    recorded_.emplace(step, std::move(r));
  }
  auto outcomes = read_jsonl(outcomes_path(options_.run_dir), &good);
  truncate_to(outcomes_path(options_.run_dir), good);
  for (const auto& o : outcomes) {
    const long long step = integer_value<long long>(o, "step", -1);
    if (step >= (long long)recorded_.size()) recorded_outcomes_[step] = outcome_from_json(o);
  }
  summary_.resumed_steps = (long long)recorded_.size();
}

std::optional<std::string> SearchEngine::budget_exhausted(long long step) const {
  const Budget& b = config_.budget;
  const Totals& t = state_->totals();
  if (stop_requested_) return "stopped";
  if (step >= b.evals) return "budget_evals";
  if (b.seconds > 0 && elapsed() >= b.seconds) return "budget_seconds";
  if (b.tokens > 0 && t.tokens >= b.tokens) return "budget_tokens";
  if (b.usd > 0 && t.cost_usd >= b.usd) return "budget_usd";
  if (b.stop_at_peak_fraction > 0 && t.any_timed && t.best_peak_fraction >= b.stop_at_peak_fraction)
    return "peak_fraction";
  return std::nullopt;
}

void SearchEngine::plan_more() {
  while (!stop_reason_ && next_plan_ < next_apply_ + config_.pipeline_depth) {
    const long long step = next_plan_;
    if (auto r = budget_exhausted(step)) {
      stop_reason_ = *r;
      break;
    }
    Slot slot;
    Plan& p = slot.plan;
    p = method_->plan(step, *state_);
    const TaskState& ts = state_->task(p.task_index);
    p.seed = Rng::derive(config_.seed, std::uint64_t(step), "proposal").next_u64();
    p.temperature = config_.temperature;
    p.parent_ind = state_->individual(p.parent);
    p.reference_ind = ts.best;
    p.reference = ts.best ? ts.best->id : -1;
    for (long long id : p.inspirations)
      if (auto i = state_->individual(id)) p.inspiration_inds.push_back(i);
    p.history.assign(ts.history.begin(), ts.history.end());

    agent::ProposalContext& c = slot.context;
    c.task = ts.task;
    if (p.parent_ind) c.parent = evaluated(p.parent_ind);
    for (const auto& i : p.inspiration_inds) c.inspirations.push_back(evaluated(i));
    for (const auto& i : p.history) c.history.push_back(evaluated(i));
    for (const auto& i : ts.evaluated) c.measured.push_back(measured(i));
    c.strategy = p.strategy;
    c.model = p.model;
    c.temperature = p.temperature;
    c.seed = p.seed;
    c.step = step;
    c.gpu = gpu_;
    slot.timestamps["planned"] = utc_now_iso();

    const nlohmann::json planned = plan_json(p);
    auto check = [&](const nlohmann::json& recorded, const char* where) {
      if (recorded.contains("plan") && recorded.at("plan") != planned)
        throw Error("resume diverged at step " + std::to_string(step) + ": the " + where +
                    " plan differs from the replayed one: " + recorded.at("plan").dump() + " vs " + planned.dump());
    };
    if (auto it = recorded_.find(step); it != recorded_.end()) {
      check(it->second, "recorded");
      slot.outcome = outcome_from_json(it->second);
    } else if (auto ot = recorded_outcomes_.find(step); ot != recorded_outcomes_.end()) {
      slot.outcome = ot->second;
      ++summary_.reused_outcomes;
    }
    // Spent in an earlier session: the LLM budget counts it before new calls.
    if (slot.outcome && options_.spend) options_.spend->charge(slot.outcome->usage);
    slots_.emplace(step, std::move(slot));
    if (!slots_.at(step).outcome) submit_proposal(step);
    ++next_plan_;
  }
}

void SearchEngine::submit_proposal(long long step) {
  Slot& s = slots_.at(step);
  s.proposing = true;
  agent::ProposalContext ctx = s.context;
  ctx.seed = attempt_seed(s.plan.seed, s.attempt);
  const ProposerSlot slot = slots_info_.at(s.plan.proposer);
  const int attempt = s.attempt;
  proposal_pool_->submit([this, step, attempt, ctx = std::move(ctx), slot] {
    agent::Proposal p;
    try {
      std::lock_guard g(*slot.lock);
      p = slot.proposer->propose(ctx);
    } catch (const std::exception& e) {
      p = agent::Proposal{};
      p.ok = false;
      p.error = std::string("proposer failed: ") + e.what();
    }
    // Compile now, on this thread, while the evaluator may be measuring the
    // step before: evaluate() then finds the kernel in the compile cache.
    // Only the compile time and the cache flag of the result change, and
    // neither enters a decision (decision_view).
    if (p.ok) pool_->evaluator(0).compile_ahead(p.candidate);
    {
      std::lock_guard lk(mu_);
      auto it = slots_.find(step);
      if (it != slots_.end() && it->second.attempt == attempt) {
        it->second.proposal = std::move(p);
        it->second.proposing = false;
        it->second.timestamps["proposed"] = utc_now_iso();
      }
      ++events_;
    }
    cv_.notify_all();
  });
}

bool SearchEngine::apply_ready() {
  bool moved = false;
  for (;;) {
    // A step is applied only after it passed dispatch, which keeps the novelty
    // index in step order (replayed steps come with their outcome already).
    if (next_apply_ >= next_dispatch_) break;
    auto it = slots_.find(next_apply_);
    if (it == slots_.end() || !it->second.outcome) break;
    Slot& s = it->second;
    const StepOutcome& o = *s.outcome;
    const Applied a = state_->apply(s.plan, o);
    // A masked step (the machine failed, not the candidate) teaches the
    // bandit nothing: no pull, no reward, no cost.
    if (!is_masked(o)) method_->observe(s.plan, a.bandit_reward, step_cost(config_.bandit_cost, o));

    const TaskState& ts = state_->task(s.plan.task_index);
    nlohmann::json record =
        trajectory_record(config_.run_id, config_.method, ts.task, s.plan, o, a, state_->totals());
    record["totals"]["elapsed_s"] = elapsed();
    const bool replayed = recorded_.count(next_apply_) > 0;
    if (replayed) {
      if (decision_view(record) != decision_view(recorded_.at(next_apply_)))
        spdlog::warn("resume: step {} replays differently from its record", next_apply_);
    } else {
      append_line_durable(trajectories_path(options_.run_dir), record.dump());
      ++applied_this_session_;
    }
    if (a.new_best) write_best_kernel(options_.run_dir, ts);
    write_state_summary(options_.run_dir, *state_, *method_, elapsed());
    slots_.erase(it);
    ++next_apply_;
    moved = true;
    if (options_.progress) options_.progress->update(snapshot());
    if (options_.halt_after_steps >= 0 && applied_this_session_ >= options_.halt_after_steps) {
      halted_ = true;
      return moved;
    }
    plan_more();
  }
  return moved;
}

bool SearchEngine::work_in_flight() const {
  for (const auto& [step, s] : slots_)
    if (s.proposing || (s.dispatched && !s.outcome)) return true;
  return false;
}

std::string SearchEngine::describe_slots() const {
  std::string out;
  for (const auto& [step, s] : slots_)
    out += "[step " + std::to_string(step) + (s.proposing ? " proposing" : "") + (s.proposal ? " proposed" : "") +
           (s.dispatched ? " dispatched" : "") + (s.outcome ? " done" : "") + "]";
  return out + " next_dispatch " + std::to_string(next_dispatch_);
}

void SearchEngine::say(const std::string& line) const {
  if (options_.progress) options_.progress->message(line);
  else std::fprintf(stderr, "%s\n", line.c_str());
}

ProgressSnapshot SearchEngine::snapshot() const {
  ProgressSnapshot s;
  s.totals = state_->totals();
  s.budget_steps = config_.budget.evals;
  s.elapsed_s = elapsed();
  s.compile_only = config_.compile_only;
  return s;
}

RunSummary SearchEngine::run() {
  TESSERA_REQUIRE(!proposal_pool_, "SearchEngine::run runs once");
  started_ = std::chrono::steady_clock::now();
  prepare_run_dir();
  load_logs();
  proposal_pool_ = std::make_unique<tessera::ThreadPool>(config_.pipeline_depth);
  {
    std::unique_lock lk(mu_);
    plan_more();
    for (;;) {
      const unsigned long long seen = events_;
      bool moved = dispatch_ready();
      moved = apply_ready() || moved;
      if (halted_ || slots_.empty()) break;
      if (moved) continue;
      if (!work_in_flight()) throw Error("search stalled at step " + std::to_string(next_apply_) + ": " + describe_slots());
      cv_.wait_for(lk, kControllerWakeInterval, [&] { return events_ != seen; });
    }
  }
  summary_.stop_reason = halted_ ? "halted" : stop_reason_.value_or("done");
  summary_.totals = state_->totals();
  summary_.elapsed_s = elapsed();
  summary_.run_dir = options_.run_dir;
  if (options_.progress) options_.progress->finish(snapshot());
  return summary_;
}

}  // namespace tessera::search
