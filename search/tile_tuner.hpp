#pragma once
// A plain search over the tile space through the harness (`tessera tile tune`):
// per task, every legal config when the space fits the budget; otherwise the
// cost model's best configs first (tile/cost_model.hpp: the first
// kModelFirst measured are its top picks), then more of its order and
// seeded-random samples (explore), then rounds of untried one-knob neighbours
// of the fastest configs so far (refine). The configs of a batch are measured
// one at a time while a thread pool compiles the ones after them. The outcome
// says how close the model came: the winner's rank in its order and its
// predicted against measured times.
//
// The sweep ranks configs by their own cold kernel time, so by default it does
// not time the cuBLAS/cuBLASLt baselines (in a 512^3 evaluation they took 119 ms
// against the candidate's 66 ms of timing). The winner is then measured once
// more, with the baselines interleaved and CUPTI counters: the fastest of N
// noisy medians is biased towards a lucky draw, so the reported speedup is the
// confirming measurement's, from one run with its baselines. The runners-up
// (confirm_top) are re-measured the same way, so a tune shows the speedups of
// its best few configs; the reported winner stays the sweep's, since picking
// the best of several confirmations would bring the bias back.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/result.hpp"
#include "core/task.hpp"
#include "harness/evaluator.hpp"
#include "tile/config.hpp"
#include "tile/learned_model.hpp"
#include "tile/legality.hpp"
#include "tile/space.hpp"

namespace tessera::search {

struct TileTuneOptions {
  int budget = 50;             // configs measured per task (the confirmation not counted)
  std::uint64_t seed = 1;      // sampling and neighbour order
  double refine = 0.5;         // share of the budget for neighbours of the fastest (when not exhaustive)
  bool counters = false;       // CUPTI counters for every config (the confirmation always has them)
  bool sweep_baselines = false;  // time the baselines with every config, not only with the confirmation
  int confirm_top = 3;         // the sweep's fastest ok configs re-measured with baselines and counters (>= 1)
  bool compile_only = false;   // no GPU: compile and check only; nothing is confirmed
  std::string backend;         // "" = every backend of the space, else mma_sync | wgmma_tma
  // Rank with the learned cost model of the device's kind (tile/learned_model.hpp)
  // when one is stored; false: the analytical model alone.
  bool learned = true;
};

inline constexpr int kModelFirst = 8;  // the first configs a tune measures are the model's best

struct TunedConfig {
  std::string name;
  tile::Config config;
  EvalResult result;
  int order = 0;  // when it was measured: 0 for the tune's first config
  // How the tune came to it: "model" (the cost model's order), "sample" (a
  // seeded uniform draw), "seed" (tile::seeds), "refine" (a one-knob
  // neighbour of one of the fastest so far) or "exhaustive" (every legal
  // config fit the budget). The same word as a search step's move, so a
  // report can say which kind of step found each side's best.
  std::string move;
};

// How the cost model's order compared with the measurements of one tune.
struct ModelCheck {
  bool ranked = false;                // the model ranked this task's configs (not in an exhaustive tune)
  std::string first_pick;             // the model's first config
  double first_pick_predicted_us = 0;
  double first_pick_measured_us = 0;  // the sweep's cold time; 0 when it did not run ok
  int winner_rank = 0;                // the sweep winner's 1-based rank in the model's order (0: no winner)
  double winner_predicted_us = 0;
  double winner_measured_us = 0;      // the sweep's cold time of the winner
  int from_model = 0;                 // configs of the sweep taken from the model's order
};

// The check as JSON (tile tune --json, bench suite's tile records); null when
// the model did not rank the task's configs.
nlohmann::json to_json(const ModelCheck& m);

struct TileTuneOutcome {
  Task task;
  std::string plan;                  // "exhaustive" or "model + explore + refine"
  ModelCheck model;
  std::vector<TunedConfig> evaluated;  // fastest first (ok before the rest)
  int failures = 0;                  // evaluated configs neither ok nor compiled
  std::vector<TunedConfig> confirmations;  // the sweep's fastest ok configs re-measured, in sweep order
  // The sweep's winner was re-measured (not in compile-only mode, nor when nothing was ok).
  bool confirmed() const { return !confirmations.empty(); }
  // The confirming measurement of the sweep's winner; only when confirmed().
  const TunedConfig& best() const { return confirmations.front(); }
};

// Called after every measured config: done, total, best speedup so far (0 when
// the sweep times no baselines), best cold kernel time so far in µs (0: none).
using TuneProgress = std::function<void(int done, int total, double best_speedup, double best_us)>;

// bad_input unless backend is "" (every backend), mma_sync or wgmma_tma.
void check_backend(const std::string& backend);
// Whether the config belongs to `backend` ("" matches every config).
bool in_backend(const tile::Config& config, const std::string& backend);
// The default space, restricted to one backend when asked (check_backend).
tile::Space tune_space(const Task& task, const tile::Limits& limits, const std::string& backend);
// A tile config as a harness candidate (device-only source, tile_config in meta).
Candidate tile_candidate(const tile::Config& config, const Task& task);

// The sweep's timed configs as the learned cost model's training rows (what
// `tile tune --rows` appends and `tile model train|eval` reads): one per config
// with a measured cold time. The confirmations are re-measurements of configs
// the sweep timed under other options (baselines, counters), not rows.
std::vector<tile::Measurement> tune_rows(const TileTuneOutcome& outcome, const tile::Limits& limits,
                                         const std::string& device_kind);

// Throws bad_input when the task has no legal config on this target.
TileTuneOutcome tune_tile(Evaluator& evaluator, const Task& task, const tile::Limits& limits,
                          const TileTuneOptions& options, const TuneProgress& progress = {});

}  // namespace tessera::search
