#include "bench/model_eval.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <set>

#include <fmt/format.h>

#include "core/hash.hpp"
#include "core/stats.hpp"
#include "tile/cost_model.hpp"
#include "tile/features.hpp"

namespace tessera::bench {

namespace {

void summarize(ModelJudgement& j) {
  if (j.shapes.empty()) return;
  std::vector<double> rho;
  double regret = 0;
  int near = 0;
  for (const auto& s : j.shapes) {
    rho.push_back(s.spearman);
    regret += s.first_pick_ratio - 1;
    j.worst_regret = std::max(j.worst_regret, s.first_pick_ratio - 1);
    near += s.first_pick_ratio <= kNearBest;
    j.time_error += s.time_error;
  }
  const double n = double(j.shapes.size());
  j.mean_spearman = std::accumulate(rho.begin(), rho.end(), 0.0) / n;
  j.median_spearman = stats::median(rho);
  j.near_best_share = near / n;
  j.mean_regret = regret / n;
  j.time_error = std::exp2(j.time_error / n) - 1;
}

// Each shape's rows (of one device kind), by "<kind>/<task id>".
std::map<std::string, std::vector<const tile::Measurement*>> rows_by_shape(const std::vector<tile::Measurement>& rows) {
  std::map<std::string, std::vector<const tile::Measurement*>> out;
  for (const auto& m : rows) out[m.device_kind + "/" + m.task.id()].push_back(&m);
  return out;
}

void append(ModelJudgement& into, const ModelJudgement& part) {
  into.model = part.model;
  into.shapes.insert(into.shapes.end(), part.shapes.begin(), part.shapes.end());
}

}  // namespace

std::vector<double> predict_rows(const tile::LearnedModel& model, const std::vector<tile::Measurement>& rows) {
  std::vector<double> out;
  std::vector<std::vector<float>> features;
  for (const auto& m : rows) {
    const tile::Prediction p = tile::predict(m.config, m.task, m.limits);
    out.push_back(p.time_us);
    if (!model.empty()) features.push_back(tile::features(m.config, m.task, m.limits, p));
  }
  if (model.empty()) return out;
  if (!model.has_pairs()) {  // one batch
    const auto residuals = model.residuals(features);
    for (std::size_t i = 0; i < out.size(); ++i) out[i] *= std::exp2(residuals[i]);
    return out;
  }
  // A pair layer orders a shape's configs among themselves: shape by shape, as ranking asks it.
  for (const auto& [id, ms] : rows_by_shape(rows)) {
    std::vector<std::vector<float>> part;
    for (const auto* m : ms) part.push_back(std::move(features[std::size_t(m - rows.data())]));
    const auto residuals = model.shape_residuals(part);
    for (std::size_t k = 0; k < ms.size(); ++k) out[std::size_t(ms[k] - rows.data())] *= std::exp2(residuals[k]);
  }
  return out;
}

FamilySplit split_by_family(const std::vector<tile::Measurement>& rows, const std::set<std::string>& seen) {
  FamilySplit out;
  std::set<std::string> aside;
  for (const auto& m : rows) {
    if (!seen.count(tile::weight_family(m.task))) {
      out.held.push_back(m);
      continue;
    }
    ++out.set_aside_rows;
    aside.insert(m.device_kind + "/" + m.task.id());
  }
  out.set_aside_shapes = int(aside.size());
  return out;
}

ModelJudgement judge_model(const tile::LearnedModel& model, const std::vector<tile::Measurement>& rows) {
  ModelJudgement j;
  j.model = model.describe();
  for (const auto& [id, ms] : rows_by_shape(rows)) {
    if (int(ms.size()) < kMinConfigs) continue;
    std::vector<tile::Config> configs;
    std::vector<double> measured;
    for (const auto* m : ms) {
      configs.push_back(m->config);
      measured.push_back(m->cold_us);
    }
    const auto predictions = tile::predict_all(configs, ms.front()->task, ms.front()->limits, model);
    std::vector<double> predicted;
    for (const auto& p : predictions) predicted.push_back(p.time_us);
    const auto first = std::min_element(predicted.begin(), predicted.end()) - predicted.begin();
    const double best = *std::min_element(measured.begin(), measured.end());
    std::vector<double> error;
    for (std::size_t i = 0; i < measured.size(); ++i) error.push_back(std::abs(std::log2(predicted[i] / measured[i])));
    std::nth_element(error.begin(), error.begin() + long(error.size() / 2), error.end());
    j.shapes.push_back(
        {ms.front()->task.id(), int(ms.size()), stats::spearman(predicted, measured), measured[first] / best, error[error.size() / 2]});
  }
  summarize(j);
  return j;
}

TuneFirstJudgement judge_tune_first(const tile::LearnedModel& model, const std::vector<tile::Measurement>& rows) {
  TuneFirstJudgement j;
  double ratios = 0;
  for (const auto& [id, ms] : rows_by_shape(rows)) {
    if (int(ms.size()) < kMinConfigs) continue;
    const auto top = tile::rank_configs(ms.front()->task, ms.front()->limits, 1, model);
    if (top.empty()) continue;
    ++j.shapes;
    const std::string first = tile::name(top.front().config);
    double best = std::numeric_limits<double>::infinity(), first_us = 0;
    for (const auto* m : ms) {
      best = std::min(best, m->cold_us);
      if (tile::name(m->config) == first && (first_us == 0 || m->cold_us < first_us)) first_us = m->cold_us;
    }
    if (first_us <= 0) continue;
    ++j.timed;
    j.near_best += first_us / best <= kNearBest;
    ratios += first_us / best;
  }
  if (j.timed > 0) j.mean_ratio = ratios / j.timed;
  return j;
}

nlohmann::json to_json(const TuneFirstJudgement& j) {
  return {{"shapes", j.shapes}, {"timed", j.timed}, {"within_2pct", j.near_best}, {"mean_ratio", j.mean_ratio}};
}

nlohmann::json to_json(const ModelJudgement& j) {
  nlohmann::json shapes = nlohmann::json::array();
  for (const auto& s : j.shapes)
    shapes.push_back({{"task", s.task_id}, {"configs", s.configs}, {"spearman", s.spearman},
                      {"first_pick_ratio", s.first_pick_ratio}, {"time_error_log2", s.time_error}});
  return {{"model", j.model},
          {"shapes_judged", j.shapes.size()},
          {"mean_spearman", j.mean_spearman},
          {"median_spearman", j.median_spearman},
          {"first_pick_within_2pct", j.near_best_share},
          {"mean_regret", j.mean_regret},
          {"worst_regret", j.worst_regret},
          {"time_error", j.time_error},
          {"shapes", shapes}};
}

tile::TrainOptions one_of_parts(const tile::TrainOptions& o, int part, int parts) {
  tile::TrainOptions out = o;
  if (o.on_round)
    out.on_round = [report = o.on_round, part, parts](int done, int total) { report(part * total + done, parts * total); };
  return out;
}

CrossValidation cross_validate(const std::vector<tile::Measurement>& rows, int folds, const tile::LearnedModel& prior,
                               const tile::TrainOptions& options, const std::string& kind) {
  CrossValidation cv;
  cv.folds = std::max(2, folds);
  std::set<std::string> families;
  for (const auto& m : rows) families.insert(tile::weight_family(m.task));
  cv.families = int(families.size());
  // A family's fold from its name's content hash: the same split on every
  // machine and for any order of the rows.
  const auto fold_of = [&](const Task& t) {
    return int(std::stoull(content_hash(tile::weight_family(t)).substr(0, 8), nullptr, 16) % std::uint64_t(cv.folds));
  };
  for (int f = 0; f < cv.folds; ++f) {
    std::vector<tile::Measurement> train, test;
    for (const auto& m : rows) (fold_of(m.task) == f ? test : train).push_back(m);
    if (test.empty()) continue;
    append(cv.analytical, judge_model(tile::LearnedModel{}, test));
    if (!prior.empty()) append(cv.prior, judge_model(prior, test));
    if (train.empty()) continue;
    cv.train_rows += int(train.size());
    const auto learned = tile::LearnedModel::train(train, prior, one_of_parts(options, f, cv.folds), kind);
    append(cv.learned, judge_model(learned, test));
    const auto predicted = predict_rows(learned, test);
    cv.held_rows.insert(cv.held_rows.end(), test.begin(), test.end());
    cv.held_predicted_us.insert(cv.held_predicted_us.end(), predicted.begin(), predicted.end());
  }
  for (auto* j : {&cv.analytical, &cv.prior, &cv.learned}) summarize(*j);
  return cv;
}

ReplayJudgement replay_online(const tile::LearnedModel& model, const std::vector<tile::Measurement>& rows, int budget,
                              int first) {
  ReplayJudgement out;
  out.budget = budget;
  std::map<std::string, std::vector<const tile::Measurement*>> by_shape;
  for (const auto& m : rows)
    if (m.cold_us > 0) by_shape[m.device_kind + "/" + m.task.id()].push_back(&m);
  double log_static = 0, log_online = 0;
  for (const auto& [id, ms] : by_shape) {
    if (int(ms.size()) < 2 * budget) {
      ++out.too_few;
      continue;
    }
    const auto& task = ms.front()->task;
    const auto& limits = ms.front()->limits;
    std::vector<tile::Config> configs;
    double best = ms.front()->cold_us;
    for (const auto* m : ms) configs.push_back(m->config), best = std::min(best, m->cold_us);
    // The fastest predicted of the configs not picked yet.
    const auto pick = [&](const std::vector<tile::Prediction>& p, const std::vector<bool>& taken) {
      std::size_t at = configs.size();
      for (std::size_t i = 0; i < configs.size(); ++i)
        if (!taken[i] && (at == configs.size() || p[i].time_us < p[at].time_us)) at = i;
      return at;
    };
    const auto static_predictions = tile::predict_all(configs, task, limits, model);  // its order never changes
    std::vector<bool> taken_static(configs.size()), taken_online(configs.size());
    double found_static = std::numeric_limits<double>::infinity(), found_online = found_static;
    std::vector<tile::Measurement> seen;
    tile::LearnedModel online = model;
    for (int step = 0; step < budget; ++step) {
      const std::size_t s = pick(static_predictions, taken_static);
      taken_static[s] = true;
      found_static = std::min(found_static, ms[s]->cold_us);
      const std::size_t o = pick(tile::predict_all(configs, task, limits, online), taken_online);
      taken_online[o] = true;
      found_online = std::min(found_online, ms[o]->cold_us);
      seen.push_back(*ms[o]);
      if (step + 1 < budget && step + 1 >= first) {  // refitted for the next pick, as the tile proposer does
        online = tile::LearnedModel::train(seen, model, tile::online_train_options(), model.device_kind());
        ++out.refits;
      }
    }
    ++out.shapes;
    log_static += std::log(found_static / best), log_online += std::log(found_online / best);
    out.static_near += found_static <= kNearBest * best, out.online_near += found_online <= kNearBest * best;
    out.online_better += found_online < found_static, out.static_better += found_static < found_online;
  }
  if (out.shapes > 0) {
    out.static_ratio = std::exp(log_static / out.shapes), out.online_ratio = std::exp(log_online / out.shapes);
    out.static_near /= out.shapes, out.online_near /= out.shapes;
  }
  return out;
}

nlohmann::json to_json(const ReplayJudgement& r) {
  return {{"budget", r.budget},
          {"shapes", r.shapes},
          {"too_few_configs", r.too_few},
          {"static_ratio", r.static_ratio},
          {"online_ratio", r.online_ratio}, {"static_within_2pct", r.static_near}, {"online_within_2pct", r.online_near},
          {"online_better", r.online_better}, {"static_better", r.static_better}, {"refits", r.refits}};
}

nlohmann::json to_json(const CrossValidation& cv) {
  nlohmann::json j = {{"folds", cv.folds},
                      {"families", cv.families},
                      {"analytical", to_json(cv.analytical)},
                      {"learned", to_json(cv.learned)}};
  if (!cv.prior.shapes.empty()) j["prior"] = to_json(cv.prior);
  return j;
}

}  // namespace tessera::bench
