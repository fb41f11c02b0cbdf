#include "search/descriptor.hpp"

#include <algorithm>
#include <optional>

namespace tessera::search {

namespace {

std::optional<double> number_at(const nlohmann::json& j, std::initializer_list<const char*> keys) {
  if (!j.is_object()) return std::nullopt;
  for (const char* k : keys) {
    auto it = j.find(k);
    if (it == j.end()) continue;
    if (it->is_number()) return it->get<double>();
    if (it->is_string()) {
      try {
        return std::stod(it->get<std::string>());
      } catch (...) {
      }
    }
  }
  return std::nullopt;
}

// Tile configs may nest the block shape ({"block":{"m":..}}) or give it as an array.
std::optional<std::pair<double, double>> block_mn(const nlohmann::json& c) {
  if (!c.is_object()) return std::nullopt;
  auto m = number_at(c, {"block_m", "bm", "tile_m", "BM", "blockM", "cta_m", "block_tile_m"});
  auto n = number_at(c, {"block_n", "bn", "tile_n", "BN", "blockN", "cta_n", "block_tile_n"});
  if (m && n) return std::pair{*m, *n};
  for (const char* k : {"block", "block_tile", "tile", "cta_tile", "block_shape", "cta"}) {
    auto it = c.find(k);
    if (it == c.end()) continue;
    if (it->is_array() && it->size() >= 2 && (*it)[0].is_number() && (*it)[1].is_number())
      return std::pair{(*it)[0].get<double>(), (*it)[1].get<double>()};
    if (it->is_object()) {
      auto mm = number_at(*it, {"m", "M", "bm"});
      auto nn = number_at(*it, {"n", "N", "bn"});
      if (mm && nn) return std::pair{*mm, *nn};
    }
  }
  return std::nullopt;
}

}  // namespace

std::string Descriptor::key() const {
  return tile_class + "|s" + std::to_string(stages) + "|" + occupancy + "|" + bottleneck;
}
std::string Descriptor::structure() const { return tile_class + "/s" + std::to_string(stages); }
std::string Descriptor::behaviour() const { return occupancy + "/" + bottleneck; }

void to_json(nlohmann::json& j, const Descriptor& d) {
  j = {{"tile_class", d.tile_class},
       {"stages", d.stages},
       {"occupancy", d.occupancy},
       {"bottleneck", d.bottleneck},
       {"key", d.key()}};
}

std::string tile_size_class(const nlohmann::json& tile_config) {
  auto mn = block_mn(tile_config);
  if (!mn || mn->first <= 0 || mn->second <= 0) return "unknown";
  const double area = mn->first * mn->second;
  if (area <= double(kSmallTileMaxArea)) return "S";
  if (area <= double(kMediumTileMaxArea)) return "M";
  return "L";
}

int pipeline_depth(const nlohmann::json& tile_config) {
  auto s = number_at(tile_config, {"stages", "pipeline_stages", "num_stages", "pipeline_depth", "k_stages"});
  if (!s || *s < 1) return 0;
  return std::min(kMaxPipelineBin, int(*s));
}

std::string occupancy_bucket(const nlohmann::json& counters) {
  auto o = number_at(counters, {"achieved_occupancy_pct"});
  if (!o) return "unknown";
  if (*o < kOccupancyLowPct) return "<12.5";
  if (*o < kOccupancyMidPct) return "12.5-25";
  if (*o < kOccupancyHighPct) return "25-50";
  return ">=50";
}

// The unit closest to its peak wins when it is at least kBoundThroughputPct
// busy. When neither DRAM nor the tensor pipe is busy, the kernel is waiting:
// latency-bound (barriers, dependent loads, too few warps in flight). A busy SM
// without a busy tensor pipe is also latency/issue-bound for an HGEMM.
std::string bottleneck(const nlohmann::json& counters) {
  auto dram = number_at(counters, {"dram_throughput_pct"});
  auto tensor = number_at(counters, {"tensor_pipe_pct"});
  auto sm = number_at(counters, {"sm_throughput_pct", "issue_active_pct"});
  if (!dram && !tensor && !sm) return "unknown";
  const double d = dram.value_or(0), t = tensor.value_or(0);
  if (std::max(d, t) >= kBoundThroughputPct) return t >= d ? "tensor" : "memory";
  return "latency";
}

Descriptor describe(const Candidate& candidate, const EvalResult& result) {
  Descriptor d;
  const nlohmann::json cfg = candidate.meta.is_object() ? candidate.meta.value("tile_config", nlohmann::json{})
                                                        : nlohmann::json{};
  d.tile_class = tile_size_class(cfg);
  d.stages = pipeline_depth(cfg);
  d.occupancy = occupancy_bucket(result.counters);
  d.bottleneck = bottleneck(result.counters);
  return d;
}

std::vector<std::string> structure_bins() {
  std::vector<std::string> out;
  for (const char* c : {"S", "M", "L", "unknown"})
    for (int s = 0; s <= kMaxPipelineBin; ++s) out.push_back(std::string(c) + "/s" + std::to_string(s));
  return out;
}

std::vector<std::string> behaviour_bins() {
  std::vector<std::string> out;
  for (const char* o : {"<12.5", "12.5-25", "25-50", ">=50", "unknown"})
    for (const char* b : {"memory", "tensor", "latency", "unknown"}) out.push_back(std::string(o) + "/" + b);
  return out;
}

}  // namespace tessera::search
