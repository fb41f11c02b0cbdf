#pragma once
// Search against tune, from a `--kernels search:N` run (bench/measure.hpp):
// per shape, the search's confirmed speedup beside the tile tuner's at the
// same budget, and both best-so-far curves (best speedup against
// evaluations, geometric mean over shapes) on one chart. A sweep's curve
// prices each config by its own cold time against the best baseline of its
// confirmation (the baselines are timed once per source, interleaved with
// the confirmed kernel).
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "bench/run.hpp"

namespace tessera::bench {

struct ShapeVersus {
  std::string task_id;
  std::string bucket;
  long long m = 0;                   // the task's rows (an LLM layer's tokens)
  double search = 0, tile = 0;       // confirmed speedups over the fastest baseline; 0 = none
  // The two confirmations side by side, each kernel's cold time beside its
  // own timing of the baselines, minutes apart in the same worker: the tune's
  // kernel time over the search's (above 1: the search's kernel is faster),
  // and the search's confirmation's fastest baseline time over the tune's
  // (1 where the baselines timed alike). 0 where a record lacks a time (written
  // before the confirmation kept them).
  double kernel_ratio = 0, baseline_ratio = 0;
  bool same_first = false;           // the search's first config was the tune's
  int explored = 0, evaluated = 0;   // the search's exploration steps, of its evaluations
  std::vector<double> search_curve, tile_curve;  // best speedup after each evaluation
  // The tune sweep's fastest config: the move that found it (model, sample,
  // seed, refine, exhaustive; "" when the record does not say: written before
  // the tuner kept its moves), and whether the search timed it too.
  std::string tile_best_move;
  bool search_timed_tile_best = false;
  // The tune's first config (the model's first pick, as a tune measures it)
  // over the fastest of its sweep; 0 when the sweep timed no first config.
  double first_pick_ratio = 0;
};

struct SearchVsTune {
  std::vector<ShapeVersus> shapes;  // those with both figures
  double search_geomean = 0, tile_geomean = 0;
  int search_wins = 0, ties = 0, tile_wins = 0;  // by more than kTieMargin
  // The same count by kernel time alone (ShapeVersus::kernel_ratio), over the
  // shapes with both times: the speedups divide by two timings of the
  // baselines, which on a layer that streams 268 MB differed by 1.6% (an H200,
  // 8x32768x4096: cuBLAS NN 68.96 and 70.08 us beside two kernels 0.1% apart).
  int kernel_search_wins = 0, kernel_ties = 0, kernel_tile_wins = 0;
  int explored = 0, evaluated = 0;
  int same_first = 0;  // shapes whose first config was the same in both
  std::map<std::string, int> tile_best_moves;  // shapes per move that found the tune's fastest config
  int search_timed_tile_best = 0;              // shapes where the search timed the tune's fastest config
  // Configs both sweeps timed: the search's cold time over the tune's, for the
  // search's first config and for its later ones. Both time a config the same
  // way (alone), so both medians are ~1; a first one off is the protocol's.
  std::vector<double> first_ratio, later_ratio;
  // Shapes whose search was kept from an earlier run that the time limit cut
  // in the tune (bench/measure.hpp): its sweep was timed in another process,
  // perhaps on another GPU, so it is left out of the two ratios and the rho.
  int kept_searches = 0;
  // Per shape where both timed at least kRepeatMinConfigs configs, Spearman's
  // rho between the two timings of them: how well timing noise lets two
  // measurements of the same configs agree on their order, which is about
  // what a perfect cost model's rho against one timing would read.
  std::vector<double> repeat_rho;
  // Per shape, ShapeVersus::first_pick_ratio where there is one: how often the
  // model's first pick, as the tune measured it, was within kNearBest of the
  // best of its budget (the "first pick within 2% of the best of 24"
  // measured, where `tile model eval` picks among every config measured,
  // neighbours of fast configs included, which a tune never picks first).
  std::vector<double> first_pick_ratios;
  std::vector<double> search_curve, tile_curve;  // geometric mean over shapes, per evaluation
};

inline constexpr double kTieMargin = 0.005;  // within 0.5%: a tie (timing noise)
inline constexpr std::size_t kRepeatMinConfigs = 5;  // fewer ranks say little

// nullopt when the run holds no search-against-tune record.
std::optional<SearchVsTune> search_vs_tune(const Run& run);

// A markdown table (the per-bucket, per-M and overall means, the wins,
// exploration, both curves at 1, 2, 4, ... evaluations) and the chart (svg)
// beside it: writes search_vs_tune.md and .svg into
// `dir`; returns the markdown.
std::string write_search_vs_tune(const SearchVsTune& v, const std::filesystem::path& dir);

}  // namespace tessera::bench
