#include "env/score.hpp"

#include <fmt/format.h>

#include "env/detail/device.hpp"
#include "env/detail/judge.hpp"
#include "core/error.hpp"

namespace tessera::env {

std::vector<Scored> score_actions(const std::vector<ScoreRequest>& requests, const EnvConfig& config,
                                  const std::shared_ptr<EvaluatorPool>& pool) {
  if (!pool) fail_bad_input("scoring needs an evaluator pool");
  config.validate();
  for (const auto& r : requests) validate(r.task);
  const tile::Limits limits = tile::with_device(tile::Limits{}, detail::pool_device(pool));
  std::vector<ParsedAction> parsed;
  parsed.reserve(requests.size());
  for (std::size_t i = 0; i < requests.size(); ++i) {
    parsed.push_back(parse_action(requests[i].action, requests[i].previous_source, requests[i].task, config.actions, limits));
    if (parsed.back().ok && parsed.back().candidate.name.empty()) parsed.back().candidate.name = fmt::format("action {}", i);
  }
  std::vector<detail::Judgement> items;
  for (std::size_t i = 0; i < requests.size(); ++i) items.push_back({&parsed[i], requests[i].task});
  auto judged = detail::judge(items, config, *pool);
  std::vector<Scored> out(requests.size());
  for (std::size_t i = 0; i < requests.size(); ++i) {
    out[i].reward = judged[i].reward.scalar;
    out[i].info = detail::judged_info(parsed[i], judged[i]);
    out[i].info["task_id"] = requests[i].task.id();
  }
  return out;
}

}  // namespace tessera::env
