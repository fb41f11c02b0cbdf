#pragma once
// How well a cost model ranks what was measured (`tessera tile model eval`),
// judged on shapes it never saw: the rows are split by shape family (the
// N x K of a weight: every M of one layer goes to the same side), never by
// rows of one shape. For each held-out shape with at least kMinConfigs timed
// configs:
//   - Spearman's rho between predicted and measured times of its configs;
//   - the first pick: the config the model predicts fastest among those
//     measured, its measured time over the best measured (regret = ratio - 1),
//     and whether it is within kNearBest of the best.
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tile/learned_model.hpp"

namespace tessera::bench {

inline constexpr int kMinConfigs = 4;       // configs a shape needs to be judged
inline constexpr double kNearBest = 1.02;   // "within 2% of the best"

struct ShapeJudgement {
  std::string task_id;
  int configs = 0;
  double spearman = 0;
  double first_pick_ratio = 0;  // measured(first pick) / best measured
  double time_error = 0;        // median over its configs of |log2(predicted / measured)|
};

struct ModelJudgement {
  std::string model;  // describe()
  std::vector<ShapeJudgement> shapes;
  double mean_spearman = 0, median_spearman = 0;
  double near_best_share = 0;  // shapes whose first pick is within kNearBest
  double mean_regret = 0, worst_regret = 0;
  // How far predicted times are from measured ones (2^mean time_error - 1):
  // a ranking can be right with times off by a shape's constant factor, but
  // the search compares predictions with measured times, and prompts quote them.
  double time_error = 0;
};
nlohmann::json to_json(const ModelJudgement& j);

// The first config a tune would measure, as a tune meets it: the model's
// shortlist #1 (tile::rank_configs, what `tile tune` times first), looked up
// among each shape's measured configs. judge_model's first pick chooses among
// the measured configs only, which include the neighbours of fast configs a
// search or a tune's refine round adds and which a shortlist may never hold;
// this one is where a tune starts. A shape whose rows never timed that config
// is counted apart (unknown, not a miss).
struct TuneFirstJudgement {
  int shapes = 0;      // judged (at least kMinConfigs configs)
  int timed = 0;       // of those, where the rows timed the shortlist's #1
  int near_best = 0;   // of those, within kNearBest of the best measured
  double mean_ratio = 0;  // its time over the best measured, mean over the timed
};
TuneFirstJudgement judge_tune_first(const tile::LearnedModel& model, const std::vector<tile::Measurement>& rows);
nlohmann::json to_json(const TuneFirstJudgement& j);

// What `model` predicts for each row, in µs, each with its own task and
// device limits (LearnedModel::predict_us of every row, in one batch; with a
// pair layer, each shape's rows ordered among themselves, as ranking does).
std::vector<double> predict_rows(const tile::LearnedModel& model, const std::vector<tile::Measurement>& rows);

// The rows whose weight family is not in `seen`, and how many rows and
// shapes were set aside: judged on families it learned from, a model looks
// better than it is.
struct FamilySplit {
  std::vector<tile::Measurement> held;
  int set_aside_rows = 0, set_aside_shapes = 0;
};
FamilySplit split_by_family(const std::vector<tile::Measurement>& rows, const std::set<std::string>& seen);

// Judges `model` (empty: the analytical model) on `rows`.
ModelJudgement judge_model(const tile::LearnedModel& model, const std::vector<tile::Measurement>& rows);

// K-fold cross-validation over families: each fold's rows are judged by a
// model trained (on `prior`) from the other folds' rows. Returns the judgement
// over all held-out shapes, next to the analytical model's on the same shapes
// (and the prior alone, when given).
struct CrossValidation {
  ModelJudgement analytical, prior, learned;
  int folds = 0, families = 0, train_rows = 0;
  // Every judged row with what the model trained without its fold predicted
  // for it (for the one-knob pairs, model_knobs.hpp).
  std::vector<tile::Measurement> held_rows;
  std::vector<double> held_predicted_us;
};
// `o` for the training of part `part` of `parts` (a fold, a set left out):
// its boosting rounds reported as part of one count over all the parts.
tile::TrainOptions one_of_parts(const tile::TrainOptions& o, int part, int parts);
CrossValidation cross_validate(const std::vector<tile::Measurement>& rows, int folds, const tile::LearnedModel& prior,
                               const tile::TrainOptions& options, const std::string& kind);
nlohmann::json to_json(const CrossValidation& cv);

// What learning during a search buys, replayed on what was measured: per
// shape (at least 2 x budget configs), the model picks `budget` of the
// measured configs one after another, fastest predicted first, and either
// keeps its order (static: what tile tune does) or, after its first `first`
// picks (made in the static order), is refitted after each pick to all the
// picks' measured times (online: the tile proposer's refit, which waits for
// its model_first picks; online_train_options over the model). The figure is
// the best time found over the best measured.
struct ReplayJudgement {
  int budget = 0, shapes = 0;
  int too_few = 0;  // shapes left out: fewer than 2 x budget measured configs, where K picks would take most of them
  double static_ratio = 0, online_ratio = 0;  // geometric means over shapes
  double static_near = 0, online_near = 0;    // shares of shapes within kNearBest
  int online_better = 0, static_better = 0;   // shapes where one found a faster config than the other
  int refits = 0;                             // online refits made, over all shapes
};
ReplayJudgement replay_online(const tile::LearnedModel& model, const std::vector<tile::Measurement>& rows, int budget,
                              int first);
nlohmann::json to_json(const ReplayJudgement& r);

}  // namespace tessera::bench
