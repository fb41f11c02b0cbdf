// The prompt's model-picks section (prompt.hpp, model_picks.md): an LLM sees
// what the tile compiler's cost model would measure first, with its
// predicted times, and may start from it or argue against it.
#include <fmt/format.h>

#include "agent/detail/tile_guide.hpp"
#include "agent/gpu_limits.hpp"
#include "agent/prompt.hpp"
#include "tile/cost_model.hpp"
#include "tile/learned_model.hpp"

namespace tessera::agent {

std::string PromptBuilder::model_picks_section(const ProposalContext& c, std::size_t count) const {
  const tile::Limits limits = tile_limits(c.gpu);
  const tile::LearnedModel model = models_->prior(tile::device_kind(c.gpu.name));
  const auto ranking = tile::rank_configs(c.task, limits, count, model);
  if (ranking.empty()) return {};
  std::string entries;
  for (const auto& r : ranking)
    entries += fmt::format("- {}: {:.1f} us predicted ({} waves of {} CTAs, {}-bound)\n", tile::name(r.config),
                           r.prediction.time_us, r.prediction.waves, r.prediction.ctas, r.prediction.bound);
  while (!entries.empty() && entries.back() == '\n') entries.pop_back();
  return render_template(templates_.get("model_picks"), {{"model", model.describe() + " cost model"}, {"entries", entries}},
                         "model_picks");
}

}  // namespace tessera::agent
