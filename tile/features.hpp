#pragma once
// What the learned cost model sees of a (config, task, device): the config's
// knobs, the shape, the device's size, and the analytical model's own
// prediction with its terms (waves, tail and padding efficiency, bytes per
// FLOP, the compute / memory / overhead split). The analytical terms carry
// most of the signal; the learned model corrects where they are wrong.
#include <string>
#include <vector>

#include "core/task.hpp"
#include "tile/config.hpp"
#include "tile/cost_model.hpp"
#include "tile/legality.hpp"

namespace tessera::tile {

// The feature names, in the order features() writes them (a model stored on
// disk records them, so a model from another feature set is refused).
const std::vector<std::string>& feature_names();

// One row of features; `prediction` is predict(config, task, limits).
std::vector<float> features(const Config& config, const Task& task, const Limits& limits, const Prediction& prediction);

}  // namespace tessera::tile
