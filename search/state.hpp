#pragma once
// The search state that decisions read: per task a population, a MAP-Elites
// archive, the best kernel and the recent attempts; run totals. It changes
// only through apply(), in step order, so replaying the logged outcomes
// rebuilds it exactly (this is how --resume works).
#include <deque>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/task.hpp"
#include "search/archive.hpp"
#include "search/config.hpp"
#include "search/population.hpp"
#include "search/step.hpp"

namespace tessera::search {

struct TaskState {
  TaskState(Task t, const SearchConfig& c);
  Task task;
  std::string id;
  Population population;
  Archive archive;
  IndividualPtr best;  // fastest timed kernel (noise-aware)
  std::deque<IndividualPtr> history;  // recent attempts (failures included), newest last
  std::vector<IndividualPtr> evaluated;  // every evaluated attempt, oldest first (what learning proposers read)
  long long steps = 0;
  long long evaluations = 0;
  std::vector<double> best_curve;  // best speedup after each of this task's steps (0 = none yet)
};

struct Totals {
  long long steps = 0;
  long long evaluations = 0;    // harness calls, re-measurements included
  long long remeasured = 0;
  long long duplicates = 0;           // steps whose every proposal repeated an evaluated kernel
  long long repeated_proposals = 0;   // proposals that repeated an evaluated kernel (each one re-asked)
  long long proposal_failures = 0;
  long long noise_changed_decisions = 0;
  long long tokens = 0;
  double cost_usd = 0;
  std::map<std::string, long long> by_status;
  double best_speedup = 0;        // geometric mean over tasks that have a best kernel
  double best_peak_fraction = 0;  // the lowest over tasks (all must reach the stop fraction)
  bool any_timed = false;
};
void to_json(nlohmann::json& j, const Totals& t);

// What applying one step did: acceptance decisions and the reward.
struct Applied {
  nlohmann::json acceptance = nlohmann::json::object();
  nlohmann::json reward = nlohmann::json::object();
  nlohmann::json descriptor = nullptr;
  double bandit_reward = 0;  // in [0, 1]
  double scalar_reward = 0;
  bool new_best = false;
};

class SearchState {
public:
  SearchState(const std::vector<Task>& tasks, const SearchConfig& config);

  Applied apply(const Plan& plan, const StepOutcome& outcome);

  const std::vector<TaskState>& tasks() const { return tasks_; }
  const TaskState& task(int i) const { return tasks_.at(i); }
  const Totals& totals() const { return totals_; }
  IndividualPtr individual(long long id) const;
  const SearchConfig& config() const { return config_; }

private:
  void update_totals();

  SearchConfig config_;
  std::vector<TaskState> tasks_;
  Totals totals_;
  std::map<long long, IndividualPtr> by_id_;
};

}  // namespace tessera::search
