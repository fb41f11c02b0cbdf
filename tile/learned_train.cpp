// Fitting the learned cost model (learned_model.hpp): the rows of a run's
// measurements, grouped by shape, and one ensemble per layer: residual, or
// ranking then level (detail/learned_layer.hpp).
#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <random>
#include <set>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "core/error.hpp"
#include "tile/cost_model.hpp"
#include "tile/detail/learned_layer.hpp"
#include "tile/features.hpp"
#include "tile/learned_model.hpp"

namespace tessera::tile {

using detail::Role;

#ifdef TESSERA_HAVE_XGBOOST
namespace {

// The residual branch's share of a blend (TrainOptions::Target::blend): half.
// By family on 217 H200 shapes, a quarter and three quarters ranked worse.
constexpr double kBlendWeight = 0.5;
constexpr double kPairLearningRate = 0.1;
constexpr int kTrainThreads = 1;  // small data: threads cost more than they save, and one is deterministic

// Training rows grouped by shape (and device), consecutive: the ranking
// objective wants each query's rows together.
struct Rows {
  std::vector<float> flat;  // features, row-major
  std::size_t n = 0, ncol = 0;
  std::vector<float> log2_residual;  // log2(measured / analytical)
  std::vector<unsigned> groups;      // rows per shape, in order
  std::set<std::string> families;    // weight_family() of every row
  std::span<const float> row(std::size_t i) const { return {flat.data() + i * ncol, ncol}; }
  double log2_measured(std::size_t i) const { return log2_residual[i] + detail::log2_analytical(row(i)); }
};

Rows rows_of(const std::vector<Measurement>& in) {
  std::vector<const Measurement*> kept;
  for (const auto& m : in)
    if (m.cold_us > 0) kept.push_back(&m);
  if (kept.empty()) fail_bad_input("no measurement with a time to learn from");
  const auto key = [](const Measurement* m) { return m->device_kind + "/" + m->task.id(); };
  std::stable_sort(kept.begin(), kept.end(), [&](auto* a, auto* b) { return key(a) < key(b); });
  Rows r;
  for (std::size_t i = 0; i < kept.size(); ++i) {
    const Measurement& m = *kept[i];
    const Prediction p = predict(m.config, m.task, m.limits);
    const auto f = features(m.config, m.task, m.limits, p);
    r.flat.insert(r.flat.end(), f.begin(), f.end());
    r.ncol = f.size();
    r.log2_residual.push_back(float(std::log2(m.cold_us / p.time_us)));
    r.families.insert(weight_family(m.task));
    if (i == 0 || key(kept[i - 1]) != key(kept[i])) r.groups.push_back(0);
    ++r.groups.back();
  }
  r.n = kept.size();
  return r;
}

// The slope, within shapes, of log2(measured) on a ranking layer's T (see
// Layer::a). 1 when the data cannot say (one config per shape, or a slope that
// is not positive, which would reverse the order).
double spread(const Rows& r, const std::vector<double>& below, const std::vector<float>& trees) {
  double num = 0, den = 0;
  std::size_t row = 0;
  for (const unsigned n : r.groups) {
    double mt = 0, my = 0;
    std::vector<double> t(n), y(n);
    for (std::size_t k = 0; k < n; ++k) {
      const std::size_t i = row + k;
      const double log2_analytical = detail::log2_analytical(r.row(i));
      t[k] = log2_analytical + below[i] - trees[i];
      y[k] = r.log2_measured(i);
      mt += t[k] / n, my += y[k] / n;
    }
    for (std::size_t k = 0; k < n; ++k) num += (t[k] - mt) * (y[k] - my), den += (t[k] - mt) * (t[k] - mt);
    row += n;
  }
  const double a = den > 0 ? num / den : 1;
  return std::isfinite(a) && a > 0 ? a : 1;
}

std::shared_ptr<LearnedModel::Layer> fit_layer(const Rows& r, const std::vector<double>& below, Role role,
                                               const TrainOptions& o, const std::string& kind,
                                               const std::function<void()>& after_round) {
  // A residual or level layer fits log2(measured / analytical) on top of what
  // the layers below add. A ranking layer's label orders one shape's configs
  // by measured time, -log2(measured) (rank:pairwise puts larger labels and
  // scores first; -log2(measured / analytical) would order them by the
  // analytical model's error instead), and its base margin is minus the
  // corrected log time, so that its scores rank the corrected times. (The
  // per-shape level the ranking leaves free is the level layer's.)
  std::vector<float> label(r.n), margin(r.n);
  for (std::size_t i = 0; i < r.n; ++i) {
    const double analytical = role == Role::ranking ? detail::log2_analytical(r.row(i)) : 0;
    label[i] = float(role == Role::ranking ? -(r.log2_residual[i] + analytical) : r.log2_residual[i]);
    margin[i] = float(role == Role::ranking ? -(below[i] + analytical) : below[i]);
  }
  const std::vector<float> flat = role == Role::level ? detail::level_view(r.flat, r.ncol) : r.flat;
  detail::DMatrix train(flat, r.n, r.ncol);
  train.set("label", label);
  train.set("base_margin", margin);
  if (role == Role::ranking) train.set_groups(r.groups);

  auto layer = std::make_shared<LearnedModel::Layer>();
  layer->device_kind = kind;
  layer->rows = role == Role::level ? 0 : int(r.n);  // the rows are counted once per model
  layer->role = role;
  layer->options = {{"role", int(role)}, {"trees", o.trees}, {"max_depth", o.max_depth},
                    {"learning_rate", o.learning_rate}, {"min_child_weight", o.min_child_weight}, {"l2", o.l2},
                    {"reach", o.reach}};
  layer->booster = std::make_unique<detail::Booster>(train);
  auto& b = *layer->booster;
  b.set("objective", role == Role::ranking ? "rank:pairwise" : "reg:squarederror");
  b.set("base_score", "0");  // the margin is the layers below plus this layer's: nothing else
  b.set("tree_method", "exact");
  b.set("max_depth", std::to_string(o.max_depth));
  b.set("eta", fmt::format("{}", o.learning_rate));
  b.set("min_child_weight", fmt::format("{}", o.min_child_weight));
  b.set("lambda", fmt::format("{}", o.l2));
  b.set("nthread", std::to_string(kTrainThreads));
  b.set("seed", "0");
  b.set("verbosity", "0");
  for (int i = 0; i < o.trees; ++i) b.update(i, train), after_round();
  // The trees' output alone: predicted on a matrix without the base margin.
  if (role == Role::ranking) layer->a = spread(r, below, b.margins(detail::DMatrix(flat, r.n, r.ncol)));
  return layer;
}

// The pair layer (TrainOptions::pairs): per row, o.pairs others of its shape
// drawn at random (a fixed seed: the same rows train the same model), labelled
// 1 when the row measured faster. A pair's weight grows with the gap up to
// kPairFullGap (log2 units, about 2%): closer pairs are the timer's noise as
// much as the kernels' order. Null when no shape has two rows.
constexpr double kPairFullGap = 0.03;

std::shared_ptr<LearnedModel::Layer> fit_pairs(const Rows& r, const TrainOptions& o, const std::string& kind,
                                               const std::function<void()>& after_round) {
  std::mt19937 rng(0);
  std::vector<std::pair<std::size_t, std::size_t>> pairs;
  std::vector<float> label, weight;
  std::size_t start = 0;
  for (const unsigned n : r.groups) {
    const std::size_t draws = std::min<std::size_t>(std::size_t(o.pairs), n - 1);  // 0 for a shape of one row
    for (std::size_t i = start; i < start + n; ++i) {
      std::set<std::size_t> taken;
      while (taken.size() < draws) {
        const std::size_t j = start + rng() % n;  // mt19937's output is fixed by the standard; a distribution's is not
        if (j == i || !taken.insert(j).second) continue;
        pairs.emplace_back(i, j);
        const double gap = r.log2_measured(j) - r.log2_measured(i);  // log2(t_j / t_i)
        label.push_back(gap > 0 ? 1.0f : 0.0f);
        weight.push_back(float(std::min(std::abs(gap) / kPairFullGap, 1.0)));
      }
    }
    start += n;
  }
  if (pairs.empty()) return nullptr;  // no shape with two measured configs: nothing to order
  detail::DMatrix train(detail::pair_rows(r.flat, r.ncol, pairs), pairs.size(), 2 * r.ncol);
  train.set("label", label);
  train.set("weight", weight);
  auto layer = std::make_shared<LearnedModel::Layer>();
  layer->device_kind = kind;
  layer->rows = 0;  // the same rows as the layers under it
  layer->role = Role::pairs;
  layer->options = {{"role", int(Role::pairs)}, {"pairs", o.pairs}, {"trees", o.pair_trees},
                    {"max_depth", o.pair_max_depth}, {"learning_rate", kPairLearningRate}};
  layer->booster = std::make_unique<detail::Booster>(train);
  auto& b = *layer->booster;
  b.set("objective", "binary:logistic");
  b.set("tree_method", "hist");  // two hundred thousand pairs: exact splits cost minutes
  b.set("max_depth", std::to_string(o.pair_max_depth));
  b.set("eta", fmt::format("{}", kPairLearningRate));
  b.set("nthread", std::to_string(kTrainThreads));
  b.set("seed", "0");
  b.set("verbosity", "0");
  for (int i = 0; i < o.pair_trees; ++i) b.update(i, train), after_round();
  return layer;
}

}  // namespace
#endif

LearnedModel LearnedModel::train(const std::vector<Measurement>& rows, const LearnedModel& prior,
                                 const TrainOptions& o, std::string kind) {
#ifndef TESSERA_HAVE_XGBOOST
  (void)rows, (void)prior, (void)o, (void)kind;
  detail::unavailable();
#else
  const Rows r = rows_of(rows);
  LearnedModel out = prior;
  const int layers = o.target == TrainOptions::Target::residual ? 1 : o.target == TrainOptions::Target::pairwise ? 2 : 3;
  const int rounds = layers * o.trees + (o.pairs > 0 ? o.pair_trees : 0);
  int done = 0;
  const std::function<void()> after_round = [&] {
    if (o.on_round) o.on_round(++done, rounds);
  };
  // Stacked with a reach: this training's layers apply near its rows' shapes only.
  const auto reach = o.reach > 0 && !prior.empty()
                         ? std::make_shared<const detail::Reach>(detail::reach_of(r.flat, r.ncol, o.reach))
                         : nullptr;
  const auto fit = [&](const std::vector<double>& below, Role role) {
    auto layer = fit_layer(r, below, role, o, kind, after_round);
    layer->reach = reach;
    return layer;
  };
  // What it was trained on, the prior's included (unknown when the prior's is).
  if (out.families_) out.families_->insert(r.families.begin(), r.families.end());
  const std::vector<double> below = prior.residuals(r.flat, r.ncol);
  if (o.target == TrainOptions::Target::residual) {
    out.layers_.push_back(fit(below, Role::residual));
  } else {
    out.layers_.push_back(fit(below, Role::ranking));
    out.layers_.push_back(fit(out.residuals(r.flat, r.ncol), Role::level));
  }
  if (o.target == TrainOptions::Target::blend) {
    // The residual branch, fitted on the prior (not on the ranking above it) and averaged with it.
    auto layer = fit(below, Role::residual);
    layer->role = Role::blend;
    layer->options["role"] = int(Role::blend);
    layer->a = kBlendWeight;
    layer->rows = 0;  // the same rows as the ranking layer's
    out.layers_.push_back(layer);
  }
  if (auto layer = o.pairs > 0 ? fit_pairs(r, o, kind, after_round) : nullptr) {
    layer->reach = reach;
    out.layers_.push_back(std::move(layer));
  }
  return out;
#endif
}

}  // namespace tessera::tile
