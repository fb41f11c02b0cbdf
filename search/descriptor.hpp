#pragma once
// Behaviour descriptors for the MAP-Elites archive. Two come from the kernel's
// structure (tile size class, pipeline depth: read from meta["tile_config"]
// when the tile compiler made the kernel) and two from what the harness
// measured (achieved-occupancy bucket, and the bottleneck the CUPTI counters
// point at). docs/search.md lists the bins and thresholds.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/candidate.hpp"
#include "core/result.hpp"

namespace tessera::search {

// Block tile area (BM*BN, elements) bounds of the size classes.
inline constexpr long long kSmallTileMaxArea = 64 * 64;
inline constexpr long long kMediumTileMaxArea = 128 * 128;
// A unit (DRAM, tensor pipe, SM issue) counts as the bottleneck at or above
// this percentage of its peak throughput.
inline constexpr double kBoundThroughputPct = 60.0;
// Occupancy bucket upper edges (percent of the SM's warp slots).
inline constexpr double kOccupancyLowPct = 12.5;
inline constexpr double kOccupancyMidPct = 25.0;
inline constexpr double kOccupancyHighPct = 50.0;
inline constexpr int kMaxPipelineBin = 5;  // depths >= 5 share one bin

struct Descriptor {
  std::string tile_class = "unknown";  // S | M | L | unknown
  int stages = 0;                      // 1..kMaxPipelineBin, 0 = unknown
  std::string occupancy = "unknown";   // <12.5 | 12.5-25 | 25-50 | >=50 | unknown
  std::string bottleneck = "unknown";  // memory | tensor | latency | unknown

  std::string key() const;          // stable cell key
  std::string structure() const;    // heatmap row: tile class + stages
  std::string behaviour() const;    // heatmap column: occupancy + bottleneck
  bool operator==(const Descriptor&) const = default;
};
void to_json(nlohmann::json& j, const Descriptor& d);

// Lenient readers: the tile compiler owns the config's JSON, so several
// spellings are accepted ({"block_m":128}, {"bm":128}, {"block":[128,256,64]}, ...).
std::string tile_size_class(const nlohmann::json& tile_config);
int pipeline_depth(const nlohmann::json& tile_config);
std::string occupancy_bucket(const nlohmann::json& counters);
std::string bottleneck(const nlohmann::json& counters);

Descriptor describe(const Candidate& candidate, const EvalResult& result);

// Every value each dimension can take, in display order (for the heatmap).
std::vector<std::string> structure_bins();
std::vector<std::string> behaviour_bins();

}  // namespace tessera::search
