#include "agent/detail/tile_guide.hpp"

#include <spdlog/spdlog.h>

namespace tessera::agent::detail {

std::vector<double> Guide::predict(const std::vector<tile::Config>& configs, const Task& task,
                                   const tile::Limits& limits) const {
  std::vector<double> out;
  for (const auto& p : tile::predict_all(configs, task, limits, model)) out.push_back(p.time_us);
  return out;
}

std::vector<tile::Measurement> measurements_of(const ProposalContext& ctx, const tile::Limits& limits) {
  std::vector<tile::Measurement> rows;
  const std::string kind = tile::device_kind(ctx.gpu.name);
  for (const auto& m : ctx.measured) {
    if (m.cold_us <= 0 || !m.meta.is_object() || !m.meta.contains("tile_config")) continue;
    try {
      rows.push_back({ctx.task, tile::from_json(m.meta.at("tile_config")), limits, kind, m.cold_us});
    } catch (const std::exception&) {
      continue;  // a malformed config was never measured as one
    }
  }
  return rows;
}

tile::LearnedModel PriorCache::prior(const std::string& kind) {
  std::lock_guard g(mu_);
  auto it = loaded_.find(kind);
  if (it == loaded_.end()) it = loaded_.emplace(kind, tile::model_for_device(kind)).first;
  return it->second;
}

Guide make_guide(const ProposalContext& ctx, const tile::Limits& limits, PriorCache& priors, bool learn, bool refit) {
  Guide g;
  if (!learn || !tile::LearnedModel::available()) return g;
  const std::string kind = tile::device_kind(ctx.gpu.name);
  g.model = priors.prior(kind);
  if (!refit) return g;
  const auto rows = measurements_of(ctx, limits);
  if (int(rows.size()) < kOnlineMinRows) return g;
  try {
    g.model = tile::LearnedModel::train(rows, g.model, tile::online_train_options(), kind);
  } catch (const std::exception& e) {
    spdlog::warn("tile proposer: the online cost model was not refitted: {}", e.what());
  }
  return g;
}

}  // namespace tessera::agent::detail
