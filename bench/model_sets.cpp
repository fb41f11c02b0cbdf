#include "bench/model_sets.hpp"

#include <set>

#include "core/error.hpp"

namespace tessera::bench {

std::vector<SetHoldout> hold_out_sets(const std::vector<NamedRows>& sets, const tile::LearnedModel& prior,
                                      const tile::TrainOptions& options, const std::string& kind) {
  int filled = 0;
  for (const auto& s : sets) filled += !s.rows.empty();
  if (filled < 2)
    fail_bad_input("leaving one input out needs at least two inputs with measurements: one to judge, the others to "
                   "train on");
  std::vector<SetHoldout> out;
  for (std::size_t i = 0; i < sets.size(); ++i) {
    SetHoldout h;
    h.name = sets[i].name;
    h.rows = int(sets[i].rows.size());
    std::vector<tile::Measurement> train;
    std::set<std::string> seen;
    for (std::size_t o = 0; o < sets.size(); ++o)
      if (o != i)
        for (const auto& m : sets[o].rows) train.push_back(m), seen.insert(tile::weight_family(m.task));
    h.train_rows = int(train.size());
    std::vector<tile::Measurement> held;
    std::set<std::string> aside;
    for (const auto& m : sets[i].rows) {
      if (!seen.count(tile::weight_family(m.task))) {
        held.push_back(m);
        continue;
      }
      ++h.set_aside_rows;
      aside.insert(m.device_kind + "/" + m.task.id());
    }
    h.set_aside_shapes = int(aside.size());
    if (const auto& known = prior.trained_families(); known && !prior.empty()) {
      std::set<std::string> judged;  // what a model the prior learned from is not judged on fairly
      for (const auto& m : held)
        if (known->count(tile::weight_family(m.task))) judged.insert(m.device_kind + "/" + m.task.id());
      h.prior_seen_shapes = int(judged.size());
    }
    if (!held.empty() && !train.empty()) {
      h.analytical = judge_model(tile::LearnedModel{}, held);
      if (!prior.empty()) h.prior = judge_model(prior, held);
      h.learned = judge_model(tile::LearnedModel::train(train, prior, options, kind), held);
    }
    out.push_back(std::move(h));
  }
  return out;
}

nlohmann::json to_json(const SetHoldout& s) {
  nlohmann::json j = {{"input", s.name},
                      {"measurements", s.rows},
                      {"set_aside", {{"measurements", s.set_aside_rows}, {"shapes", s.set_aside_shapes}}},
                      {"train_measurements", s.train_rows},
                      {"analytical", to_json(s.analytical)},
                      {"learned", to_json(s.learned)}};
  if (!s.prior.shapes.empty()) j["prior"] = to_json(s.prior);
  if (s.prior_seen_shapes >= 0) j["prior_trained_on_shapes"] = s.prior_seen_shapes;
  return j;
}

}  // namespace tessera::bench
