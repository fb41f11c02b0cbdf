#pragma once
// Where a cost model's order is wrong, knob by knob: among each shape's
// measured configs, the pairs that differ in one knob only (raster 0 against
// raster 8, one stage more, a cluster ...), with how much slower or faster the
// second measured, how much the model predicted, and how often it ordered the
// pair the measured way. A model can rank a shape's configs well overall and
// still misjudge a knob the search's neighbour moves turn one at a time.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tile/learned_model.hpp"

namespace tessera::bench {

struct KnobChange {
  std::string knob;      // "raster", "stages", "cluster", "tile", "swap-AB", ... (the config name's fields)
  std::string from, to;  // the field's two values in the name ("r0", "r8"), in string order
  int pairs = 0;
  // Geometric means over the pairs of time(to) / time(from) - 1: measured,
  // and as the model and the analytical model predict them.
  double measured = 0, predicted = 0, analytical = 0;
  double agree = 0;  // share of pairs the model orders as measured (a predicted tie is not)
};

// The changes seen in at least `min_pairs` pairs, most pairs first, with
// `predicted_us[i]` the prediction for rows[i] (the same size as rows).
std::vector<KnobChange> knob_changes(const std::vector<tile::Measurement>& rows, const std::vector<double>& predicted_us,
                                     int min_pairs);
// The same with `model`'s predictions (empty: the analytical model's).
std::vector<KnobChange> knob_changes(const tile::LearnedModel& model, const std::vector<tile::Measurement>& rows,
                                     int min_pairs);
nlohmann::json to_json(const KnobChange& k);

}  // namespace tessera::bench
