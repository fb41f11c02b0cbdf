#pragma once
// Runs the search engine with fakes in a fresh temporary run directory.
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "fakes.hpp"
#include "search/engine.hpp"
#include "search/trajectory.hpp"

namespace tessera::search::testing {

std::filesystem::path fresh_dir(const std::string& name);

struct FakeRun {
  int evaluators = 1;
  int delay_ms = 0;
  double noisy_spread = -1;
  int broken_stages = 0;
  int fail_every = 0;
  int infra_error_stages = 0;
  double beside_baselines = 1.0;  // FakeEvaluator::beside_baselines
  int infra_on_call = 0;          // FakeEvaluator::infra_on_call
  long long tokens_per_call = 0;
  double usd_per_call = 0;
  long long halt_after = -1;
  std::vector<Task> tasks;  // empty: one 1024^3 task
  // Filled by run():
  std::vector<std::shared_ptr<FakeProposer>> proposers;
  std::vector<std::shared_ptr<FakeStats>> evals;
};

SearchConfig small_config(const std::string& method, long long evals, std::uint64_t seed = 1);

RunSummary run_fake(const SearchConfig& config, const std::filesystem::path& dir, FakeRun& run);

std::vector<nlohmann::json> records(const std::filesystem::path& dir);
std::vector<nlohmann::json> decisions(const std::filesystem::path& dir);

}  // namespace tessera::search::testing
