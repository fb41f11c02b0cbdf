#include "search/step.hpp"

#include "core/json_read.hpp"
#include "search/rng.hpp"

namespace tessera::search {

nlohmann::json plan_json(const Plan& p) {
  return {{"step", p.step},
          {"task_index", p.task_index},
          {"task_id", p.task_id},
          {"island", p.island},
          {"parent", p.parent},
          {"inspirations", p.inspirations},
          {"selection", p.selection},
          {"proposer", p.proposer},
          {"proposer_name", p.proposer_name},
          {"model", p.model},
          {"strategy", p.strategy},
          {"strategy_target", p.strategy_target},
          {"arm", p.arm},
          {"masked_arms", p.masked_arms},
          {"temperature", p.temperature},
          {"seed", p.seed},
          {"reference", p.reference}};
}

std::uint64_t attempt_seed(std::uint64_t plan_seed, int attempt) {
  return attempt == 0 ? plan_seed : Rng::derive(plan_seed, std::uint64_t(attempt), "attempt").next_u64();
}

nlohmann::json candidate_json(const Candidate& c) {
  return {{"kind", to_string(c.kind)}, {"name", c.name}, {"meta", c.meta}, {"source", c.source}};
}

Candidate candidate_from_json(const nlohmann::json& j) {
  Candidate c;
  // A record without a kind is of a device-only candidate; an unknown kind is
  // an error, never taken for device-only.
  c.kind = j.value("kind", CandidateKind::device_only);
  c.name = j.value("name", std::string());
  c.meta = j.value("meta", nlohmann::json::object());
  c.source = j.value("source", std::string());
  return c;
}

nlohmann::json outcome_json(const StepOutcome& o) {
  nlohmann::json j = {{"step", o.step},
                      {"proposal_ok", o.proposal_ok},
                      {"proposal_error", o.proposal_error},
                      {"proposer_info", o.proposer_info},
                      {"proposer_name", o.proposer},
                      {"messages", o.messages},
                      {"action", o.action},
                      {"attempt_seed", o.seed},
                      {"candidate", candidate_json(o.candidate)},
                      {"novelty_key", o.novelty_key},
                      {"novelty_rejects", o.novelty_rejects},
                      {"duplicate_of", o.duplicate_of},
                      {"usage", o.usage},
                      {"evaluated", o.evaluated},
                      {"eval", o.evaluated ? nlohmann::json(o.result) : nlohmann::json(nullptr)},
                      {"first_eval", o.first ? nlohmann::json(*o.first) : nlohmann::json(nullptr)},
                      {"verdict_first", o.verdict_first},
                      {"verdict_final", o.verdict_final},
                      {"evaluator", o.evaluator},
                      {"device", o.device},
                      {"baseline_protocol", o.baseline_protocol},
                      {"baseline_source", o.baseline_source},
                      {"timestamps", o.timestamps}};
  return j;
}

StepOutcome outcome_from_json(const nlohmann::json& j) {
  StepOutcome o;
  if (!j.contains("step")) fail_bad_input("a step record has no 'step'");
  o.step = integer_value<long long>(j, "step", 0);
  o.proposal_ok = j.value("proposal_ok", false);
  o.proposal_error = j.value("proposal_error", std::string());
  o.proposer = j.value("proposer_name", std::string());
  o.proposer_info = j.value("proposer_info", nlohmann::json::object());
  o.messages = j.value("messages", nlohmann::json::array());
  o.action = j.value("action", nlohmann::json::object());
  o.seed = integer_value<std::uint64_t>(j, "attempt_seed", 0);
  if (j.contains("candidate")) o.candidate = candidate_from_json(j.at("candidate"));
  o.novelty_key = j.value("novelty_key", std::string());
  o.novelty_rejects = j.value("novelty_rejects", nlohmann::json::array());
  o.duplicate_of = integer_value<long long>(j, "duplicate_of", -1);
  if (j.contains("usage")) o.usage = j.at("usage").get<agent::Usage>();
  o.evaluated = j.value("evaluated", false);
  if (o.evaluated && j.contains("eval") && !j.at("eval").is_null()) o.result = j.at("eval").get<EvalResult>();
  if (j.contains("first_eval") && !j.at("first_eval").is_null()) o.first = j.at("first_eval").get<EvalResult>();
  o.verdict_first = j.value("verdict_first", std::string());
  o.verdict_final = j.value("verdict_final", std::string());
  o.evaluator = integer_value<int>(j, "evaluator", -1);
  o.device = j.value("device", std::string());
  o.baseline_protocol = j.value("baseline_protocol", std::string());
  o.baseline_source = j.value("baseline_source", nlohmann::json(nullptr));
  o.timestamps = j.value("timestamps", nlohmann::json::object());
  return o;
}

}  // namespace tessera::search
