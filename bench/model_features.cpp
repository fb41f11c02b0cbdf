#include "bench/model_features.hpp"

#include <fmt/format.h>

#include "bench/model_eval.hpp"
#include "core/error.hpp"
#include "tile/cost_model.hpp"
#include "tile/features.hpp"

namespace tessera::bench {

namespace {

// Enough digits that a feature read back is the float the trees were given.
std::string number(double v) { return fmt::format("{:.9g}", v); }

}  // namespace

Table feature_table(const std::vector<tile::Measurement>& rows, const tile::LearnedModel& model) {
  std::vector<std::string> headers = {"task", "family", "device_kind", "config", "cold_us", "analytical_us", "model_us"};
  const auto& names = tile::feature_names();
  headers.insert(headers.end(), names.begin(), names.end());
  Table table(std::move(headers));
  const std::vector<double> predicted = predict_rows(model, rows);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto& m = rows[i];
    const tile::Prediction p = tile::predict(m.config, m.task, m.limits);
    const std::vector<float> f = tile::features(m.config, m.task, m.limits, p);
    std::vector<std::string> cells = {m.task.id(),
                                      tile::weight_family(m.task),
                                      m.device_kind,
                                      tile::name(m.config),
                                      number(m.cold_us),
                                      number(p.time_us),
                                      number(predicted[i])};
    for (float v : f) cells.push_back(number(v));
    table.add_row(std::move(cells));
  }
  return table;
}

}  // namespace tessera::bench
