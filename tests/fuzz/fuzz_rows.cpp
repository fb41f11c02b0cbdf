// A line of a cost-model rows file (`tile model rows`, `tile tune --rows`):
// outside data that `tile model train|eval` read. Only bad_input may come
// out; a legal row that reads has finite features (an infinite or NaN one
// fails the trainer deep inside XGBoost instead of naming the line).
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "tile/cost_model.hpp"
#include "tile/features.hpp"
#include "tile/learned_model.hpp"
#include "tests/fuzz/fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tessera::tile;
  const std::string text = tessera::fuzz::as_string(data, size);
  tessera::fuzz::expect_input_errors_only([&] {
    const Measurement m = measurement_from_json(nlohmann::json::parse(text));
    if (!legality(m.config, m.task, m.limits)) return;  // the readers skip it (bench/model_data.cpp)
    const auto fs = features(m.config, m.task, m.limits, predict(m.config, m.task, m.limits));
    for (std::size_t i = 0; i < fs.size(); ++i) {
      if (std::isfinite(fs[i])) continue;
      std::fprintf(stderr, "feature %s = %f for %s\n", feature_names()[i].c_str(), fs[i], text.c_str());
      std::abort();
    }
  });
  return 0;
}
