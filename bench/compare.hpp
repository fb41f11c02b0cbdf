#pragma once
// Shape by shape against another tool's published speedups (docs/bench.md,
// "Comparing with another tool"), e.g. CUDA-L2's per-shape H100 table: a CSV
// keyed by `mnk` ("M_N_K") with a speedup column per baseline. Both sides are
// speedups over cuBLAS/cuBLASLt measured by each tool in its own runs, on its
// own GPU, with its own method: ratios of ratios, never times. The other
// tool's files are read at run time; nothing of them is kept in tessera.
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/table.hpp"
#include "core/table.hpp"

namespace tessera::bench {

// What CUDA-L2 says of its own method; the default --against-method.
inline constexpr const char* kCudaL2Method =
    "a timer around each call as the host issues it (CUDA events recorded before and after one call, so launch "
    "overhead is inside the interval), with no L2 flush between calls";

struct OtherTable {
  std::string name;  // e.g. "CUDA-L2"
  std::string path;
  std::vector<std::string> columns;  // speedup columns, file order
  std::map<std::string, std::map<std::string, double>> values;  // mnk -> column -> speedup
};

// bad_input: missing file, no `mnk` column, a malformed key or number, a key twice.
OtherTable load_other_table(const std::filesystem::path& csv, const std::string& name);

struct CompareRow {
  std::string mnk, bucket;
  std::map<std::string, double> ours, theirs;  // common columns only
};

struct CompareBucket {
  std::string bucket;
  std::map<std::string, Stat> ours, theirs;         // by column, over shapes both sides have
  std::map<std::string, int> ours_ahead, compared;  // shapes where our speedup is the larger
};

struct Comparison {
  std::string other_name, other_path, other_method, our_method;
  std::vector<std::string> columns;  // common speedup columns, ours' order
  std::vector<CompareRow> rows;
  std::vector<CompareBucket> buckets;  // run buckets, then "all"
  int our_shapes = 0, their_shapes = 0;
};

// bad_input when the run has no timed kernel or no column in common.
Comparison compare_runs(const Run& run, const std::vector<ShapeRow>& rows, const OtherTable& other,
                        const std::string& other_method);

// The plain statement that the two were measured differently.
std::string caveat(const Comparison& c);
// Per bucket and column: both sides' geomean (mean) and how often tessera
// was ahead; the Markdown and the HTML report both write it.
Table comparison_table(const Comparison& c);
std::string comparison_markdown(const Comparison& c);
std::string comparison_csv(const Comparison& c);
nlohmann::json to_json(const Comparison& c);

}  // namespace tessera::bench
