#pragma once
// What the tile proposer ranks its moves with (tile_proposer.hpp): the cost
// model of the GPU's kind (the analytical model, corrected by the learned
// model stored for that kind or transferred from another), updated with what
// this task measured so far in the run. A pure function of the context, so a
// resumed search ranks as the first run did.
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "agent/proposer.hpp"
#include "tile/config.hpp"
#include "tile/cost_model.hpp"
#include "tile/learned_model.hpp"

namespace tessera::agent::detail {

// Measurements of this task before the learned model is refitted to them:
// fewer say little the prior does not.
inline constexpr int kOnlineMinRows = 3;

struct Guide {
  tile::LearnedModel model;  // empty: the analytical model alone
  std::string describe() const { return model.describe(); }
  std::vector<double> predict(const std::vector<tile::Config>& configs, const Task& task,
                              const tile::Limits& limits) const;
};

// The task's measured tile configs as training rows (verified and timed ones only).
std::vector<tile::Measurement> measurements_of(const ProposalContext& ctx, const tile::Limits& limits);

// Priors per device kind, loaded once per owner (a tile proposer, a prompt builder).
class PriorCache {
public:
  tile::LearnedModel prior(const std::string& kind);

private:
  std::mutex mu_;
  std::map<std::string, tile::LearnedModel> loaded_;
};

// The guide for one proposal: the prior (with learning on), refitted online
// to the task's measurements when `refit` and there are at least
// kOnlineMinRows of them.
Guide make_guide(const ProposalContext& ctx, const tile::Limits& limits, PriorCache& priors, bool learn, bool refit);

}  // namespace tessera::agent::detail
