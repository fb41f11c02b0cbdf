#pragma once
// Size buckets: the bench suite's means and win counts are given per bucket
// and overall. A task file may define its own ("buckets" key,
// datasets/README.md); otherwise the grid's buckets apply.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/task.hpp"

namespace tessera::bench {

// The grid's bucket edges in FLOPs (2*M*N*K); datasets/generate_grid.py writes
// the same ones into grid1000.json (a test keeps the two equal).
inline constexpr double kSmallMaxFlops = 1073741824.0;   // 2^30: the small grid's bucket
inline constexpr double kMediumMaxFlops = 68719476736.0;  // 2^36: about 100 us at the H100's fp16 rate

struct Bucket {
  std::string name;
  std::optional<double> max_flops;  // nullopt: no upper limit (the last bucket)
};

std::vector<Bucket> default_buckets();

// The "buckets" array of a task file, or default_buckets() when it has none.
// bad_input when the array is malformed: names missing or repeated, limits not
// increasing, or a last bucket with a limit (a task could then fall outside).
std::vector<Bucket> load_buckets(const std::filesystem::path& tasks_file);
std::vector<Bucket> parse_buckets(const nlohmann::json& j, const std::string& where);

// The first bucket whose max_flops the task's FLOPs do not exceed.
const std::string& bucket_of(const Task& task, const std::vector<Bucket>& buckets);

nlohmann::json to_json(const std::vector<Bucket>& buckets);

}  // namespace tessera::bench
