#pragma once
// The learned cost model's training rows as the model sees them: one line per
// measurement with the shape, the config, the measured cold time, what the
// analytical model and a learned model predict, and every feature the trees
// are given (tile/features.hpp), in feature_names()'s order. For users who
// fit their own rankers (pandas, XGBoost's Python package) on what tessera
// measured, and for finding where a model is wrong, config by config.
#include <filesystem>
#include <vector>

#include "core/table.hpp"
#include "tile/learned_model.hpp"

namespace tessera::bench {

// Columns: task, family (the weight, N x K: the unit a held-out split keeps
// together), device_kind, config, cold_us, analytical_us, model_us (the
// learned model's prediction; the analytical one for an empty model), then
// the features by name.
Table feature_table(const std::vector<tile::Measurement>& rows, const tile::LearnedModel& model);

}  // namespace tessera::bench
