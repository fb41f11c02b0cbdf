// A cost-model rows file (`tile model rows`, `tile tune --rows`): outside data
// that `tile model train|eval` read, through the same reader
// (bench::read_model_data). Only bad_input may come out (the reader names the
// line of a malformed row); every row it keeps has finite features (an
// infinite or NaN one fails the trainer deep inside XGBoost instead).
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "bench/model_data.hpp"
#include "tile/cost_model.hpp"
#include "tile/features.hpp"
#include "tests/fuzz/fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tessera;
  const auto file = fuzz::scratch_dir() / "rows.jsonl";
  fuzz::write_file(file, fuzz::as_string(data, size));
  fuzz::expect_clear_errors_only([&] {
    for (const auto& m : bench::read_model_data({file}).rows) {
      const auto fs = tile::features(m.config, m.task, m.limits, tile::predict(m.config, m.task, m.limits));
      for (std::size_t i = 0; i < fs.size(); ++i) {
        if (std::isfinite(fs[i])) continue;
        std::fprintf(stderr, "feature %s = %f for %s\n", tile::feature_names()[i].c_str(), fs[i],
                     tile::name(m.config).c_str());
        std::abort();
      }
    }
  });
  return 0;
}
