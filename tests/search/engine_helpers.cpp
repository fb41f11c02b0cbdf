#include "engine_helpers.hpp"

#include <unistd.h>

#include "core/task.hpp"

namespace tessera::search::testing {

namespace fs = std::filesystem;

fs::path fresh_dir(const std::string& name) {
  const fs::path d = fs::temp_directory_path() / ("tessera_search_test_" + std::to_string(getpid())) / name;
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

SearchConfig small_config(const std::string& method, long long evals, std::uint64_t seed) {
  SearchConfig c;
  c.run_id = "test";
  c.method = method;
  c.seed = seed;
  c.budget.evals = evals;
  c.islands = 2;
  c.island_capacity = 6;
  c.migration_interval = 5;
  return c;
}

RunSummary run_fake(const SearchConfig& config, const fs::path& dir, FakeRun& run) {
  std::vector<Task> tasks = run.tasks.empty() ? std::vector<Task>{task_from_shape("1024x1024x1024")} : run.tasks;
  auto p = std::make_shared<FakeProposer>("tile", run.tokens_per_call, run.usd_per_call);
  p->broken_stages = run.broken_stages;
  p->fail_every = run.fail_every;
  run.proposers = {p};
  ProposerSlot slot;
  slot.name = "tile";
  slot.proposer = p;
  std::vector<std::unique_ptr<Evaluator>> evals;
  run.evals.clear();
  for (int i = 0; i < run.evaluators; ++i) {
    auto e = std::make_unique<FakeEvaluator>("FakeGPU" + std::to_string(i));
    e->delay_ms = run.delay_ms;
    e->noisy_spread = run.noisy_spread;
    e->infra_error_stages = run.infra_error_stages;
    e->beside_baselines = run.beside_baselines;
    e->infra_on_call = run.infra_on_call;
    run.evals.push_back(e->stats);
    evals.push_back(std::move(e));
  }
  EngineOptions opts;
  opts.run_dir = dir;
  opts.halt_after_steps = run.halt_after;
  SearchEngine engine(config, tasks, {slot}, std::move(evals), opts);
  return engine.run();
}

std::vector<nlohmann::json> records(const fs::path& dir) { return read_jsonl(trajectories_path(dir)); }

std::vector<nlohmann::json> decisions(const fs::path& dir) {
  std::vector<nlohmann::json> out;
  for (const auto& r : records(dir)) out.push_back(decision_view(r));
  return out;
}

}  // namespace tessera::search::testing
