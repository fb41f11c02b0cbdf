#pragma once
// Leave one set out (`tessera tile model eval --by-input`): each input (a run
// folder or rows file, which is one sweep of one set of shapes) judged by a
// model trained, on the prior, from every other input, on its shapes whose
// weight family (N x K) no other input holds. The family cross-validation
// (model_eval.hpp) puts some families of every set into each fold; this asks
// the question to settle before shipping a model trained on several sweeps:
// on a set of shapes like none it learned from, does it rank better than the
// model under it? (Measured on H200 sweeps, docs/tile.md: a layer trained on
// LLM layers ranked grid shapes worse than its prior, while the family folds
// of the same rows said it ranked better.)
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/model_eval.hpp"
#include "tile/learned_model.hpp"

namespace tessera::bench {

struct NamedRows {
  std::string name;  // the input as given
  std::vector<tile::Measurement> rows;
};

struct SetHoldout {
  std::string name;
  int rows = 0;                      // the input's measurements
  int set_aside_rows = 0, set_aside_shapes = 0;  // of families another input holds
  int train_rows = 0;                // the other inputs' measurements, what its model learned from
  int prior_seen_shapes = -1;        // judged shapes of families the prior was trained on (-1: it does not say)
  ModelJudgement analytical, prior, learned;  // on the rest (prior: empty when there is none)
};

// One entry per input, in order. bad_input with fewer than two inputs that
// hold measurements (nothing to train on, or nothing to judge).
std::vector<SetHoldout> hold_out_sets(const std::vector<NamedRows>& sets, const tile::LearnedModel& prior,
                                      const tile::TrainOptions& options, const std::string& kind);
nlohmann::json to_json(const SetHoldout& s);

}  // namespace tessera::bench
