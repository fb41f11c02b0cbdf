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
    const auto split = split_by_family(sets[i].rows, seen);
    const auto& held = split.held;
    h.set_aside_rows = split.set_aside_rows, h.set_aside_shapes = split.set_aside_shapes;
    if (const auto& known = prior.trained_families(); known && !prior.empty())
      h.prior_seen_shapes = split_by_family(held, *known).set_aside_shapes;  // where the prior is in-sample
    if (!held.empty() && !train.empty()) {
      h.analytical = judge_model(tile::LearnedModel{}, held);
      if (!prior.empty()) h.prior = judge_model(prior, held);
      h.learned = judge_model(
          tile::LearnedModel::train(train, prior, one_of_parts(options, int(i), int(sets.size())), kind), held);
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
