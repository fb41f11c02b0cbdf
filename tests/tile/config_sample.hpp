#pragma once
// The sample of tile-compiler configs that GPU tests evaluate: legal configs
// on a few shapes (both layouts, odd sizes, every epilogue), drawn with a
// fixed seed, seeds first, then topped up so that every value of every knob
// of every backend's space appears in at least one config. Shared by the
// verification test (tests/tile/gpu_eval_test.cpp) and the zero-false-positive
// test of the adversarial corpus (tests/adversarial), which also times them.
// TESSERA_TILE_GPU_SAMPLES sets the budget (default 200).
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include <fmt/format.h>

#include "core/candidate.hpp"
#include "tile/emit.hpp"
#include "tile/legality.hpp"
#include "tile/space.hpp"

namespace tessera::tile::testing {

inline constexpr int kDefaultSamples = 200;
inline constexpr std::uint64_t kSampleSeed = 5;

struct SampleShape {
  const char* mnk;
  const char* layout;
  const char* epilogue;
  int weight;  // share of the sampled configs
};

inline const std::vector<SampleShape>& sample_shapes() {
  static const std::vector<SampleShape> shapes = {
      {"1x4096x4096", "TN", "none", 4},        {"100x5000x3000", "TN", "none", 4},
      {"100x5000x3000", "NN", "bias", 3},      {"257x1000x520", "NN", "bias_gelu", 3},
      {"100x5000x3001", "TN", "bias_relu", 2}, {"333x777x1000", "TN", "none", 2},
      {"2048x2048x2048", "TN", "none", 1},     {"64x64x8192", "NN", "none", 1},
      // LLM layers: decode, M just past a multiple of 128, skinny long K.
      {"7x2112x7168", "TN", "bias", 2},        {"257x1000x4096", "TN", "none", 2},
      {"100x1024x18944", "TN", "bias_gelu", 2},
  };
  return shapes;
}

inline int sample_count() {
  if (const char* s = std::getenv("TESSERA_TILE_GPU_SAMPLES")) return std::max(1, std::atoi(s));
  return kDefaultSamples;
}

struct SampledConfig {
  Config config;
  Task task;
};

inline Candidate candidate_of(const Config& c, const Task& t) {
  Candidate cand;
  cand.source = emit(c, t);
  cand.name = name(c);
  cand.meta["tile_config"] = to_json(c);
  return cand;
}

struct KnobValue {
  Backend backend;
  std::string knob;
  int value;
};

// Every value of every knob, in the space of any task the configs are for
// (the wgmma widths depend on the task), that no config of its backend takes.
inline std::vector<KnobValue> missing_values(const std::vector<SampledConfig>& configs, const Limits& limits) {
  std::set<std::string> tasks_seen;
  std::set<std::tuple<Backend, std::string, int>> wanted;
  for (const auto& s : configs) {
    if (!tasks_seen.insert(s.task.id()).second) continue;
    for (const auto& part : default_space(s.task, limits).parts)
      for (const auto& axis : part.axes)
        for (int v : axis.values) wanted.insert({part.backend, axis.knob, v});
  }
  std::vector<KnobValue> out;
  for (const auto& want : wanted) {
    // Not structured bindings: clang 14 (the sanitizer build) cannot capture those in a lambda.
    const auto& [backend, knob, v] = want;
    const bool seen = std::any_of(configs.begin(), configs.end(), [&want](const SampledConfig& s) {
      return s.config.backend == std::get<0>(want) && get_knob(s.config, std::get<1>(want)) == std::get<2>(want);
    });
    if (!seen) out.push_back({backend, knob, v});
  }
  return out;
}

// missing_values() as "backend knob=value" lines.
inline std::vector<std::string> uncovered(const std::vector<SampledConfig>& configs, const Limits& limits) {
  std::vector<std::string> out;
  for (const auto& m : missing_values(configs, limits))
    out.push_back(fmt::format("{} {}={}", to_string(m.backend), m.knob, m.value));
  return out;
}

namespace detail {

// A legal config with the wanted knob value: one of `configs` of that backend
// with the knob changed (dependent knobs follow), or, where that alone is
// illegal, with one other knob changed first; false when none is legal.
inline bool add_one_with(std::vector<SampledConfig>& configs, std::set<std::string>& names, const KnobValue& want,
                         const Limits& limits) {
  auto take = [&](Config c, const Task& t) {
    set_knob(c, want.knob, want.value);
    canonicalize(c, t);
    if (get_knob(c, want.knob) != want.value || !legality(c, t, limits).ok) return false;
    if (!names.insert(name(c) + t.id()).second) return false;
    configs.push_back({c, t});
    return true;
  };
  const std::size_t n = configs.size();
  for (std::size_t i = 0; i < n; ++i)
    if (configs[i].config.backend == want.backend && take(configs[i].config, configs[i].task)) return true;
  for (std::size_t i = 0; i < n; ++i) {
    if (configs[i].config.backend != want.backend) continue;
    for (const auto& part : default_space(configs[i].task, limits).parts) {
      if (part.backend != want.backend) continue;
      for (const auto& axis : part.axes)
        for (int v : axis.values) {
          Config c = configs[i].config;
          set_knob(c, axis.knob, v);
          if (take(c, configs[i].task)) return true;
        }
    }
  }
  return false;
}

}  // namespace detail

// About `budget` configs spread over sample_shapes() by weight (each shape's
// seeds first, at least 4 per shape), then one more for each knob value no
// config took yet, where some sampled config can take it legally.
inline std::vector<SampledConfig> sample_configs(const Limits& limits, int budget) {
  int total_weight = 0;
  for (const auto& s : sample_shapes()) total_weight += s.weight;
  std::mt19937_64 rng(kSampleSeed);
  std::vector<SampledConfig> out;
  std::set<std::string> names;
  for (const auto& s : sample_shapes()) {
    const Task t = task_from_shape(s.mnk, s.layout, s.epilogue);
    const Space space = default_space(t, limits);
    const int n = std::max(1, budget * s.weight / total_weight);
    std::set<std::string> seen;
    std::vector<Config> configs = seeds(t, limits);
    for (const auto& c : configs) seen.insert(name(c));
    for (int miss = 0; int(configs.size()) < n && miss < 100 * n;) {
      auto c = sample(space, t, limits, rng);
      if (c && seen.insert(name(*c)).second) configs.push_back(*c);
      else ++miss;
    }
    if (int(configs.size()) > n) configs.resize(std::max<std::size_t>(n, 4));
    for (const auto& c : configs)
      if (names.insert(name(c) + t.id()).second) out.push_back({c, t});
  }
  for (const auto& want : missing_values(out, limits)) detail::add_one_with(out, names, want, limits);
  return out;
}

}  // namespace tessera::tile::testing
