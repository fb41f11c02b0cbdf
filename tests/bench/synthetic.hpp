#pragma once
// A synthetic bench run for tests of the tables and the report: plausible
// times on the grid (or part of it), written through RunWriter like a sweep.
#include <filesystem>
#include <vector>

#include "bench/run.hpp"
#include "tile/learned_model.hpp"

namespace tessera::bench::testing {

struct SyntheticOptions {
  std::vector<std::int64_t> sizes = {64, 128, 256, 512, 1024, 2048, 4096, 8192, 12288, 16384};
  bool kernels = true;
  double peak_tflops = 900;  // stored in the records' device summary
  double dram_gbps = 4800;
  int skip_every = 7;        // every n-th shape left unmeasured (a partial run); 0: none
};

RunConfig synthetic_config(const SyntheticOptions& o);
// Deterministic record for one task: the baselines' and the kernel's cold medians.
ShapeRecord synthetic_record(const Task& task, const std::vector<Bucket>& buckets, const SyntheticOptions& o);
// Writes a run folder and returns it loaded.
Run write_synthetic_run(const std::filesystem::path& dir, const SyntheticOptions& o = {});

std::filesystem::path fresh_dir(const std::string& name);

// A training row of the cost model: config c timed cold at `us` on an H200.
tile::Measurement timed_row(const Task& task, const tile::Config& c, double us);
// The analytical model's first 12 configs of four LLM shapes, each timed at its
// prediction, 0.9x with swap-AB and 1.1x without: rows with an order a learned
// model can learn, for `tile model eval` run end to end.
std::vector<tile::Measurement> learnable_rows();
// Every shape of the grid over `sizes` recorded (kernels timed), in a fresh folder.
Run complete_run(const std::string& name, std::vector<std::int64_t> sizes);

}  // namespace tessera::bench::testing
