#pragma once
// A cost model that learns from what tessera measures. The analytical model
// (cost_model.hpp) predicts a config's time from first principles; this one
// corrects it with gradient-boosted trees (XGBoost) on the features of the
// config, the shape, the device and the analytical model's own terms
// (features.hpp). A prediction is the analytical one times 2^residual, the
// residual summed over the model's layers, so with no data it is the
// analytical model. A layer learns either the order of each shape's configs
// (TrainOptions::Target::pairwise: what ranking needs) or the factor by which
// the analytical time is wrong, log2(measured / predicted); the default
// (blend) fits both side by side and averages them.
//
// Models are kept per device kind (h200, h100, ...). A model may stand on a
// prior, another kind's model whose residual is each row's starting point
// (the transfer MetaSchedule makes): an H200 model that starts from H100
// records adapts from the first H200 measurements.
#include <cstddef>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/task.hpp"
#include "tile/config.hpp"
#include "tile/legality.hpp"

namespace tessera::tile {

// One verified measurement of a tile config: a training row.
struct Measurement {
  Task task;
  Config config;
  Limits limits;            // the device it ran on, as the cost model sees it
  std::string device_kind;  // device_kind() of the GPU's name
  double cold_us = 0;       // cold kernel time (the ranking figure)
};
// One JSON object per row, the config by its name (`tessera tile model rows`
// writes them a line each; the config may also be its JSON object).
nlohmann::json to_json(const Measurement& m);
Measurement measurement_from_json(const nlohmann::json& j);  // bad_input when malformed

// The kind of a model trained on every kind's rows, pooled. The features carry
// the device (SM count, peak, and the analytical terms computed with its
// limits), and measured on held-out grid shapes a pooled H100 + H200 model
// ranked better on both GPUs than either kind's own (docs/tile.md).
inline constexpr const char* kEveryKind = "all";

// "h200" for "NVIDIA H200", "h100" for "NVIDIA H100 80GB HBM3", "a100" ...:
// the GPU model's token, lower case; "unknown" when there is none.
std::string device_kind(std::string_view gpu_name);

// A shape's family: its weight, N x K ("4096x14336"). Every M of one layer is
// one family, so judging a model on shapes it never saw splits by family.
std::string weight_family(const Task& task);

// Defaults chosen by family-split cross-validation on the H100's grid
// training sweep (docs/tile.md): deeper or longer ensembles ranked no better
// and made the shipped model larger.
struct TrainOptions {
  // What the trees fit. pairwise: XGBoost's rank:pairwise within each shape
  // (the order of its configs, which is what a ranking needs), then a second
  // ensemble on the shape's features alone that puts the times back at their
  // level without changing the order. residual: log2(measured / analytical)
  // by least squares. Measured on held-out grid shapes (docs/tile.md), the
  // ranking objective picked the best config first far more often; the
  // residual one predicts times closer to the measured ones.
  // blend (the default since 2026-11-28): both, fitted side by side on the
  // prior, their log times averaged. By family on 217 H200 shapes it ranked
  // better than either alone on rho, first pick and regret, halved the
  // pairwise fit's bias for the knobs a sweep only turns near its best config,
  // and, stacked on a prior, damaged shapes unlike its rows far less
  // (docs/tile.md, nineteenth session).
  enum class Target { residual, pairwise, blend };
  Target target = Target::blend;
  int trees = 150;
  int max_depth = 5;
  double learning_rate = 0.15;
  double min_child_weight = 2;
  double l2 = 1.0;
  // Stacked on a prior: this training's layers apply only to shapes within
  // this distance in (log2 M, log2 N, log2 K) of a shape it learned from
  // (1.0: one of the three twice or half as large); elsewhere the prior's
  // prediction stands. 0: everywhere. `tessera tile model train` sets
  // kDefaultReach; a search's refit (one shape) leaves it at 0.
  double reach = 0;
  // A pair layer (detail::Role::pairs) over the others: for each row, this
  // many others of its shape drawn at random, each pair classified by which
  // config measured faster (pairs within 2% count for less). It reorders the
  // kPairReorder fastest configs of a shape; 0: none. By family on 316 H200
  // shapes and on three sets of LLM layers no row came from, it ranked better
  // on every figure than the layers alone (docs/tile.md, forty-fourth session).
  int pairs = 0;
  int pair_trees = 300;
  int pair_max_depth = 12;
  // Called after every boosting round of every layer, with the rounds done
  // and in all (minutes for a shipped model: `tile model train|eval` draw a
  // progress bar with it). Unset: nothing is called.
  std::function<void(int done, int total)> on_round;
};
// `tessera tile model train`'s --pairs (the struct's 0 keeps a search's
// one-shape refit and the API's callers without one).
inline constexpr int kDefaultPairs = 16;
// How many of a shape's fastest configs (by the layers under it) a pair layer
// reorders: a tune's budget and more, at n (n - 1) predictions.
inline constexpr std::size_t kPairReorder = 64;
// Chosen on the H200 sweeps of datasets/cost_rows (docs/tile.md, twentieth
// session): with it, the family folds rank exactly as with no reach, and left
// one sweep out, layers kept all their gain on LLM layers they never saw and
// lost far less on grid shapes unlike their rows (rho 0.575 against 0.498
// without a reach; the prior alone 0.590). Shorter reaches cost the folds.
inline constexpr double kDefaultReach = 2.5;
// For the few rows of a search in progress: shallow trees that move the
// prior only where measurements say so.
TrainOptions online_train_options();

class LearnedModel {
public:
  LearnedModel();  // empty: the analytical model alone
  ~LearnedModel();
  LearnedModel(const LearnedModel&);
  LearnedModel& operator=(const LearnedModel&);

  // Built with XGBoost; without it train() and from_json() throw unavailable.
  static bool available();

  // Fits log2(measured / analytical) on `rows`, stacked on `prior` (may be
  // empty). Rows without a positive time are skipped. At least one row.
  static LearnedModel train(const std::vector<Measurement>& rows, const LearnedModel& prior, const TrainOptions& o,
                            std::string device_kind);

  // log2 of the factor on the analytical time (0 for an empty model), per row of features().
  std::vector<double> residuals(const std::vector<std::vector<float>>& feature_rows) const;
  // residuals() of configs of one shape, a pair layer's order put on the
  // fastest kPairReorder of them: they keep the set of log times the layers
  // under it gave, handed out in the pair layer's order, and then what the
  // layers over it add (a search's refit of its own measurements). Without a
  // pair layer (or for one row) the same as residuals().
  std::vector<double> shape_residuals(const std::vector<std::vector<float>>& feature_rows) const;
  bool has_pairs() const;
  // The analytical prediction corrected by the model.
  double predict_us(const Config& config, const Task& task, const Limits& limits) const;

  bool empty() const;
  const std::string& device_kind() const;
  int rows() const;             // training rows, the prior's included
  std::string describe() const;  // "analytical", "learned h200 (412 rows)", "learned h200 (12 rows) on h100 (1290 rows)"
  // The weight families of every row it was trained on, the prior's included
  // (stored in the model file); nullopt for a file written before it kept
  // them. What `tile model eval --model` must not judge it on.
  const std::optional<std::set<std::string>>& trained_families() const;

  nlohmann::json to_json() const;
  static LearnedModel from_json(const nlohmann::json& j);
  void save(const std::filesystem::path& file) const;  // written to a temporary file and renamed into place
  static LearnedModel load(const std::filesystem::path& file);

  struct Layer;  // one booster and how its output counts (learned_model.cpp)

private:
  // residuals() of n rows of features, row-major (n x ncol), by the first
  // `count` layers (all by default).
  std::vector<double> residuals(const std::vector<float>& flat, std::size_t ncol,
                                std::size_t count = std::size_t(-1)) const;
  std::vector<std::shared_ptr<const Layer>> layers_;  // the prior's first
  std::optional<std::set<std::string>> families_{std::in_place};  // an empty model saw nothing
};

// Where models are looked for, first found wins: $TESSERA_COST_MODEL (a
// file), <cache>/cost_models/<kind>.json (what `tessera tile model train`
// writes), $TESSERA_COST_MODEL_DIR/<kind>.json, then the models shipped in
// datasets/cost_models/.
std::filesystem::path stored_model_path(const std::string& kind);
// The file model_for_device(kind) reads: $TESSERA_COST_MODEL, else the kind's
// own or the pooled model, folder by folder; empty when neither is stored.
std::filesystem::path device_model_path(const std::string& kind);
// Every stored model file ($TESSERA_COST_MODEL first, then the folders above
// in their order, a name once: the first folder's), for `tessera doctor`.
std::vector<std::filesystem::path> stored_models();
// LearnedModel::load, once per file in a process: a later call returns the
// model read before while the file keeps its size and modification time.
LearnedModel load_stored_model(const std::filesystem::path& file);
// The model for a device kind: $TESSERA_COST_MODEL, else in the first of the
// folders above that holds one, its own (<kind>.json) or the pooled one
// (kEveryKind), its own first; else another kind's as its prior (the
// transfer), else empty. Never throws: a model that cannot be read is skipped
// with a warning. Each file is read once per process (load_stored_model).
LearnedModel model_for_device(const std::string& kind);

}  // namespace tessera::tile
