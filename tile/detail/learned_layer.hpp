#pragma once
// A layer of the learned cost model (learned_model.hpp): one booster and how
// its output counts. Shared by learned_model.cpp (prediction and storage) and
// learned_train.cpp (fitting); private to tile/.
#include <array>
#include <cstddef>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "tile/learned_model.hpp"
#ifdef TESSERA_HAVE_XGBOOST
#include "tile/detail/xgboost.hpp"
#endif

namespace tessera::tile {

namespace detail {

// What a layer's trees fit, and so how their output counts.
enum class Role {
  residual,  // log2(measured / below): added as it is
  ranking,   // rank:pairwise within each shape, larger for faster: subtracted. Its level per shape is the
             // ranking loss's, not a time's: a level layer follows it
  level,     // log2(measured / below) from the shape's and device's features only: one constant per shape,
             // which puts the times back at their level and cannot change their order
  blend,     // log2(measured / below) like residual, fitted on what was below the ranking layer under it,
             // and averaged with that ranking (and level) branch: the result is (1 - a) x the branch + a x
             // (below + this layer). The pairwise loss reads "a knob only the best configs were refined
             // to" as speed (docs/tile.md); the residual fit does not, and the two together rank better
  pairs,     // binary:logistic on two configs of one shape, [x_i, x_j - x_i]: the log-odds that i is the faster.
             // Not a time: it reorders the fastest configs of a set (LearnedModel::shape_residuals), each
             // placed by its mean log-odds against the others. Trees on the differences see what a row's
             // features alone cannot, which knob makes one config beat another at this shape (docs/tile.md)
};

// A pair layer's rows: for each (i, j), row i's features then row j's minus row i's.
std::vector<float> pair_rows(const std::vector<float>& flat, std::size_t ncol,
                             const std::vector<std::pair<std::size_t, std::size_t>>& pairs);

// The column of a feature (features.hpp) by name.
std::size_t feature_index(const char* name);
// log2 of the analytical time, from a row of features().
double log2_analytical(std::span<const float> row);
// Rows (row-major, ncol wide) as a level layer sees them: the shape's and the
// device's columns, every other one 0.
std::vector<float> level_view(const std::vector<float>& flat, std::size_t ncol);
// Where the layers of one stacked training apply (TrainOptions::reach): the
// shapes they learned from, as (log2 M, log2 N, log2 K), and how far from the
// nearest of them a shape may be. Elsewhere they leave the prior's prediction
// as it was: measured on H200 sweeps (docs/tile.md), a layer trained on LLM
// layers ranked LLM layers it never saw better than its prior and grid shapes
// far from them worse.
struct Reach {
  double radius = 0;
  std::vector<std::array<float, 3>> shapes;  // distinct, sorted
};
// The reach of training rows (row-major, ncol wide).
Reach reach_of(const std::vector<float>& flat, std::size_t ncol, double radius);
// Per row: 1 when its shape is within the reach.
std::vector<char> within(const Reach& reach, const std::vector<float>& flat, std::size_t ncol);
nlohmann::json to_json(const Reach& reach);
Reach reach_from_json(const nlohmann::json& j);  // bad_input when malformed

// Thrown where the build has no XGBoost.
[[noreturn]] void unavailable();

}  // namespace detail

struct LearnedModel::Layer {
  std::string device_kind;
  int rows = 0;
  detail::Role role = detail::Role::residual;
  // A ranking layer's corrected log time is T = log2(analytical) + below - f
  // (f its trees' output); its spread is the ranking loss's. a, fitted by
  // least squares within each shape at training, brings it to the measured
  // spread: the layer adds a T - log2(analytical) - below. Any a > 0 keeps the
  // order.
  double a = 1;
  std::shared_ptr<const detail::Reach> reach;  // null: every shape (the layers of one training share it)
  nlohmann::json options;
#ifdef TESSERA_HAVE_XGBOOST
  std::unique_ptr<detail::Booster> booster;
  mutable std::mutex mu;  // XGBoost's predict is not documented thread-safe on one booster
#endif
};

}  // namespace tessera::tile
