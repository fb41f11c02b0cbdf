#pragma once
// The search space over tile configs: per-backend axes (one per knob), with
// enumeration, sampling, one-knob neighbours, crossover and known-good seeds.
// Everything returned is legal for the task under the given limits.
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "core/task.hpp"
#include "tile/config.hpp"
#include "tile/legality.hpp"

namespace tessera::tile {

// One knob and the values it may take. `knob` is the config's JSON key; enum
// and bool values are stored as their integer codes (see set_knob).
struct Axis {
  std::string knob;
  std::vector<int> values;
};

struct SubSpace {
  Backend backend = Backend::mma_sync;
  std::vector<Axis> axes;
};

struct Space {
  std::vector<SubSpace> parts;  // one per backend allowed on the target
  // Number of raw points (before legality and canonicalisation).
  unsigned long long raw_size() const;
};

// The wgmma N values every task's space has (before its own fits): the
// narrow ones cuBLAS runs small outputs on, the powers of two and the
// non-powers of two between them. The cost model's shortlist starts from
// the same list.
const std::vector<int>& wgmma_widths();

// Tile widths (multiples of 8, at most 256) that cut `rows` into the fewest
// tiles and into up to pieces-1 more, each as narrow as that allows: the
// wgmma N that fits an M (with swap-AB) instead of the next power of two.
// E.g. 100 -> {104, 56, 40, 32}, 257 -> {136, 88, 72, 56}.
std::vector<int> fitted_tile_cols(std::int64_t rows, int pieces);

// The default space for a task: mma_sync always (sm_80+), wgmma_tma on sm_90a
// (its bn axis holds the task's fitted widths; swap_ab only for TN).
Space default_space(const Task& task, const Limits& limits);

// Sets one knob from its integer code (enums: declaration order; bools: 0/1).
// Only codes listed in the default space's axes are valid.
void set_knob(Config& c, const std::string& knob, int value);
int get_knob(const Config& c, const std::string& knob);
// Makes the dependent knobs consistent with the backend and the task: the
// epilogue follows the task; wgmma_tma uses prefetch == stages, paired loads
// and the TMA swizzle; mma_sync clamps prefetch to stages-1 and has no cluster.
void canonicalize(Config& c, const Task& task);

// Legal configs in raw-index order, deduplicated, at most max_count.
std::vector<Config> enumerate(const Space& space, const Task& task, const Limits& limits, std::size_t max_count);
// A legal point: a backend drawn uniformly, then uniform raw points of its
// sub-space until one is legal (max_tries per backend, then the next backend);
// nullopt when none was found.
std::optional<Config> sample(const Space& space, const Task& task, const Limits& limits, std::mt19937_64& rng,
                             int max_tries = 2000);
// The axis knobs of c whose values its backend's axes do not hold ("split_k"
// for a split of 3). Neighbours, crossover and sampling move along the axes, so
// a tune's refine and the search reach such a value only from a config that
// has it already (the model's shortlist, a seed); {"backend"} when the space
// has no part for c's backend.
std::vector<std::string> off_axes(const Config& c, const Space& space);
// Legal configs that differ from c in exactly one axis (dependent knobs follow).
std::vector<Config> neighbours(const Config& c, const Space& space, const Task& task, const Limits& limits);
// Each axis taken from a or b at random (the backend from one of them); nullopt
// when no legal child was found in max_tries.
std::optional<Config> crossover(const Config& a, const Config& b, const Space& space, const Task& task,
                                const Limits& limits, std::mt19937_64& rng, int max_tries = 64);
// Known-good starting points for the task's shape class, filtered by legality.
// For small problems the wave-filling seeds come first.
std::vector<Config> seeds(const Task& task, const Limits& limits);
// Seeds sized to the machine (wave_seeds.cpp): for each small wgmma tile, the
// split-K that spreads the work over every SM while leaving each CTA at least
// two k-tiles, ranked by a rough per-SM cost; at most max_count, legal, sm_90a only.
std::vector<Config> wave_seeds(const Task& task, const Limits& limits, std::size_t max_count);

}  // namespace tessera::tile
