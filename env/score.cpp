#include "env/score.hpp"

#include "env/judge.hpp"

namespace tessera::env {

std::vector<Scored> score_actions(const std::vector<ScoreRequest>& requests, const EnvConfig& config,
                                  const std::shared_ptr<EvaluatorPool>& pool) {
  std::vector<JudgeRequest> asked;
  asked.reserve(requests.size());
  for (const auto& r : requests) asked.push_back({r.action, r.task, r.previous_source, {}});
  const auto verdicts = judge_batch(asked, config, pool);
  std::vector<Scored> out(requests.size());
  for (std::size_t i = 0; i < requests.size(); ++i) {
    out[i].reward = verdicts[i].reward.scalar;
    out[i].info = verdicts[i].record();
  }
  return out;
}

}  // namespace tessera::env
