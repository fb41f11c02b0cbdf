#pragma once
// Fakes for the search tests: a deterministic evaluator whose speed is a
// function of the candidate's tile config, and a stateless proposer that
// mutates the parent's config using only the context's seed (so replays and
// resumes get the same proposals).
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include <nlohmann/json.hpp>

#include "agent/proposer.hpp"
#include "harness/evaluator.hpp"

namespace tessera::search::testing {

struct FakeConfig {
  int block_m = 64, block_n = 64, stages = 2, swizzle = 0;
  nlohmann::json json() const {
    return {{"block_m", block_m}, {"block_n", block_n}, {"stages", stages}, {"swizzle", swizzle}};
  }
  static FakeConfig from(const nlohmann::json& j);
};

// The fake "speedup" of a config: peaks at 128x256, 4 stages, swizzled.
double fake_speedup(const FakeConfig& c);

// Builds the source the fake proposer emits for a config.
std::string fake_source(const FakeConfig& c);

// Counters that outlive the evaluator (the engine owns and destroys it).
struct FakeStats {
  std::atomic<int> calls{0};
  std::atomic<int> max_concurrent{0};
  std::atomic<int> compiled_ahead{0};        // compile_ahead() calls
  std::atomic<int> evaluated_after_ahead{0};  // evaluate() calls whose source was compiled ahead
  std::atomic<int> timed_baselines{0};        // timed evaluations that timed the baselines too
};

class FakeEvaluator final : public Evaluator {
public:
  explicit FakeEvaluator(std::string name = "FakeGPU", double rel_spread = 0.02)
      : name_(std::move(name)), spread_(rel_spread) {}
  EvalResult evaluate(const Candidate& candidate, const Task& task, const EvalOptions& options) override;
  std::string describe() const override { return "fake evaluator " + name_; }
  DeviceSummary device() const override;
  void compile_ahead(const Candidate& candidate) override;

  std::shared_ptr<FakeStats> stats = std::make_shared<FakeStats>();
  std::atomic<int> delay_ms{0};
  // When > 0, every measurement reports this spread (to force borderline verdicts).
  double noisy_spread = -1;
  // A kernel's cold time when the baselines are timed beside it, over its time
  // alone (the worker interleaves them; on a GPU they slow it a little).
  double beside_baselines = 1.0;
  // Configs with this many stages fail as the machine's fault (infra_error; 0: never).
  int infra_error_stages = 0;
  int infra_on_call = 0;  // this call (counting from 1) fails as the machine's fault (0: none)

private:
  std::string name_;
  double spread_;
  std::atomic<int> inside_{0};
  std::mutex mu_;
  std::map<std::string, int> seen_;  // per candidate: how often measured
  std::map<std::string, int> ahead_;  // per source hash: compile_ahead() calls
};

class FakeProposer final : public agent::Proposer {
public:
  explicit FakeProposer(std::string name = "fake", long long tokens_per_call = 0, double usd_per_call = 0)
      : name_(std::move(name)), tokens_(tokens_per_call), usd_(usd_per_call) {}
  std::string name() const override { return name_; }
  agent::Proposal propose(const agent::ProposalContext& context) override;

  std::atomic<int> calls{0};
  std::atomic<int> saw_rejected_history{0};  // calls whose history held a rejected duplicate
  // Fails (no candidate) when the seed's low bits hit this modulus (0: never).
  int fail_every = 0;
  // Emits a compile error for configs with this many stages (0: never).
  int broken_stages = 0;

private:
  std::string name_;
  long long tokens_;
  double usd_;
};

}  // namespace tessera::search::testing
