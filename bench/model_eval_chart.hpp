#pragma once
// `tessera tile model eval --plot FILE.svg`: the judgement as a picture. The
// table gives each model's mean and median; where a model loses, and on how
// many shapes, shows in the spread, which a reader takes in faster from a
// curve than from 300 rows of --json.
#include <string>
#include <vector>

#include "bench/model_eval.hpp"

namespace tessera::bench {

struct ChartedJudgement {
  std::string name;  // the legend's: short (the legend is 150 px wide)
  const ModelJudgement* judgement = nullptr;
};

// Two panels in one SVG, one line a model: Spearman's rho per shape, from the
// shape it ranks worst to the best (dashed: 0.9), and its first pick's time over
// the best measured, from the farthest to the nearest (dashed: kNearBest). The
// x axis is the share of the model's shapes, so models that judged different
// counts of shapes share it. Models that judged no shape are left out.
std::string model_eval_chart(const std::vector<ChartedJudgement>& models);

}  // namespace tessera::bench
