#pragma once
// A cost model for tile configs. From the shape and the device (SMs, shared
// memory, DRAM bandwidth, tensor peak: tile::Limits, filled from what the
// evaluator's device reports, the H200's figures otherwise) it predicts a
// config's waves, tail efficiency, bytes per FLOP and kernel time, so that
// configs can be ranked before anything is measured. It is a roofline with
// the Hopper specifics that decide small and skinny GEMMs: how many SMs get
// work, how many bytes each keeps in flight, what the tensor cores compute of
// padding, what a split's fix-up and the epilogue cost. Its constants are
// stated with their source (measured, or assumed) in cost_model.cpp and
// docs/tile.md; it orders configs, the tuner measures them.
#include <cstddef>
#include <string>
#include <vector>

#include "core/task.hpp"
#include "tile/config.hpp"
#include "tile/learned_model.hpp"
#include "tile/legality.hpp"

namespace tessera::tile {

struct Prediction {
  double time_us = 0;          // predicted cold kernel time (a learned model's, when rank_configs was given one)
  double analytical_us = 0;    // this model's own time, before any learned correction
  int tiles = 0;               // output tiles of the MMA's problem
  int ctas = 0;                // CTAs launched
  int walking_ctas = 0;        // those that compute: a persistent grid's rounds on as few as need them
  int ctas_per_sm = 0;         // resident at once
  int waves = 0;               // launch waves of resident CTAs (1 for a persistent grid)
  double tail_efficiency = 0;  // the mean SM's share of the k-iterations over the busiest SM's
  double pad_efficiency = 0;   // useful multiply-adds over those the tiles compute
  double bytes_per_flop = 0;   // DRAM bytes per useful FLOP
  double compute_us = 0;       // the busiest SM: tensor cores, shared memory, L2 -> SM, latency
  double memory_us = 0;        // the whole GPU: DRAM and L2 bandwidth
  double overhead_us = 0;      // launch, first load, refills, epilogue, split/stream-K fix-up
  std::string bound;           // compute, memory or latency: the largest of the three parts
};

// Never throws for an illegal config: it predicts what the config would cost
// (callers rank legal configs only).
Prediction predict(const Config& config, const Task& task, const Limits& limits);

struct Ranked {
  Config config;
  Prediction prediction;
};

// The model's shortlist for a task, fastest predicted first: structured
// candidates (tile shapes with the non-powers of two and the task's M fits,
// swap-AB, split-K that fills the SMs, stream-K, persistent, two or three
// pipeline depths, the epilogue stores) and the seeds, all legal. The order is
// diversified: each structural family (tile, warps, swap-AB, schedule, split,
// cluster, staging over the ring) gives its best config once before any gives a second, since
// variants of one family tend to rise and fall together and the tuner's
// refine rounds explore them anyway. At most max_count. With a learned model
// (learned_model.hpp) its corrected times order the list and stand in
// time_us; the analytical ones stay in analytical_us. `extra` configs join the
// candidates (where legal): where one would stand had the shortlist held it.
std::vector<Ranked> rank_configs(const Task& task, const Limits& limits, std::size_t max_count,
                                 const LearnedModel& learned = LearnedModel{}, const std::vector<Config>& extra = {});

// predict() for many configs of one task, corrected by `learned` (when not empty).
std::vector<Prediction> predict_all(const std::vector<Config>& configs, const Task& task, const Limits& limits,
                                    const LearnedModel& learned);

// predict_all() as rank_configs ranks: a one-wave tiled grid the shortlist
// runs row-major is predicted as its grouped sibling, which the analytical
// model times the same, since the learned models' raster knob reads "not
// raster 8" as "near the best"; and a single-buffered wgmma tile of a shape
// of 64 GFLOP or more as its double-buffered twin (model_rank.cpp,
// as_the_model_saw).
std::vector<Prediction> predict_ranked(const std::vector<Config>& configs, const Task& task, const Limits& limits,
                                       const LearnedModel& learned);

// 1-based rank of `config` in `ranking` (by name); when absent, the place it
// would take had the shortlist held it (ranked with `learned`, as `ranking` was,
// and diversified as rank_configs does), among the configs `ranking` holds.
int model_rank(const std::vector<Ranked>& ranking, const Config& config, const Task& task, const Limits& limits,
               const LearnedModel& learned = LearnedModel{});

}  // namespace tessera::tile
