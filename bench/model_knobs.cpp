#include "bench/model_knobs.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "bench/model_eval.hpp"
#include "core/error.hpp"
#include "tile/config.hpp"
#include "tile/cost_model.hpp"

namespace tessera::bench {

namespace {

// The fields of a config's name (docs/tile.md, "Names"), the epilogue left
// out (it is the task's): w128x256x64 g2x1 s4p4 pa d1 sw ed r8 k1s t c1x1,
// then swap-AB, present or not.
const std::vector<std::string>& knob_names() {
  static const std::vector<std::string> names = {"tile",   "warps",   "stages", "loads",    "registers", "smem",
                                                 "store",  "raster",  "split-K", "schedule", "cluster",   "swap-AB"};
  return names;
}

std::vector<std::string> fields(const tile::Config& c) {
  const std::string n = tile::name(c);
  std::vector<std::string> out;
  std::size_t at = 0;
  for (int i = 0; i < 11; ++i) {  // the eleven fixed fields; the rest is "swapab_" and the epilogue
    const std::size_t end = n.find('_', at);
    out.push_back(n.substr(at, end - at));
    at = end + 1;
  }
  out.push_back(c.swap_ab ? "swapab" : "-");
  return out;
}

struct Timed {
  std::vector<std::string> fields;
  double measured, predicted, analytical;
};

}  // namespace

std::vector<KnobChange> knob_changes(const tile::LearnedModel& model, const std::vector<tile::Measurement>& rows,
                                     int min_pairs) {
  return knob_changes(rows, predict_rows(model, rows), min_pairs);
}

std::vector<KnobChange> knob_changes(const std::vector<tile::Measurement>& rows, const std::vector<double>& predicted_us,
                                     int min_pairs) {
  if (predicted_us.size() != rows.size()) throw Error("knob_changes: one prediction per row");  // a tessera bug
  std::map<std::string, std::vector<Timed>> by_shape;  // device kind and task
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto& m = rows[i];
    if (m.cold_us <= 0 || predicted_us[i] <= 0) continue;
    const tile::Prediction p = tile::predict(m.config, m.task, m.limits);
    by_shape[m.device_kind + "/" + m.task.id()].push_back({fields(m.config), m.cold_us, predicted_us[i], p.time_us});
  }
  struct Sum {
    int pairs = 0, agree = 0;
    double measured = 0, predicted = 0, analytical = 0;  // sums of log ratios
  };
  std::map<std::tuple<std::size_t, std::string, std::string>, Sum> sums;
  for (const auto& [shape, timed] : by_shape) {
    for (std::size_t i = 0; i < timed.size(); ++i)
      for (std::size_t j = i + 1; j < timed.size(); ++j) {
        std::size_t differs = 0, field = 0;
        for (std::size_t f = 0; f < timed[i].fields.size(); ++f)
          if (timed[i].fields[f] != timed[j].fields[f]) ++differs, field = f;
        if (differs != 1) continue;
        const bool ordered = timed[i].fields[field] < timed[j].fields[field];
        const Timed& from = ordered ? timed[i] : timed[j];
        const Timed& to = ordered ? timed[j] : timed[i];
        Sum& s = sums[{field, from.fields[field], to.fields[field]}];
        const double measured = std::log(to.measured / from.measured), predicted = std::log(to.predicted / from.predicted);
        ++s.pairs;
        s.measured += measured;
        s.predicted += predicted;
        s.analytical += std::log(to.analytical / from.analytical);
        s.agree += (measured > 0 && predicted > 0) || (measured < 0 && predicted < 0);
      }
  }
  std::vector<KnobChange> out;
  for (const auto& [key, s] : sums) {
    if (s.pairs < min_pairs) continue;
    const auto& [field, from, to] = key;
    out.push_back({knob_names()[field], from, to, s.pairs, std::expm1(s.measured / s.pairs),
                   std::expm1(s.predicted / s.pairs), std::expm1(s.analytical / s.pairs), double(s.agree) / s.pairs});
  }
  std::stable_sort(out.begin(), out.end(), [](const KnobChange& a, const KnobChange& b) { return a.pairs > b.pairs; });
  return out;
}

nlohmann::json to_json(const KnobChange& k) {
  return {{"knob", k.knob},         {"from", k.from},           {"to", k.to},
          {"pairs", k.pairs},       {"measured", k.measured},   {"predicted", k.predicted},
          {"analytical", k.analytical}, {"agree", k.agree}};
}

}  // namespace tessera::bench
