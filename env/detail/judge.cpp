#include "env/detail/judge.hpp"

#include "env/detail/baseline_cache.hpp"

namespace tessera::env::detail {

namespace {

nlohmann::json attempt_record(const EvalResult& r) {
  return {{"status", to_string(r.status)}, {"reason", r.reason}, {"wall_ms", r.wall_ms}};
}

bool timed_in_full(const EvalResult& r) { return r.mode == "full" && r.status == Status::ok; }

// One round over the pool: the requests of `todo`, each with or without
// baselines, in two batches (a batch has one set of options).
void evaluate_round(const std::vector<std::size_t>& todo, const std::vector<Judgement>& items,
                    const std::vector<bool>& with_baselines, const EnvConfig& config, EvaluatorPool& pool,
                    std::vector<EvalResult>& results) {
  for (const bool baselines : {true, false}) {
    std::vector<EvalRequest> batch;
    std::vector<std::size_t> index;
    for (std::size_t i : todo) {
      if (with_baselines[i] != baselines) continue;
      batch.push_back({items[i].action->candidate, items[i].task});
      index.push_back(i);
    }
    if (batch.empty()) continue;
    EvalOptions o = eval_options(config);
    o.baselines = baselines;
    auto out = pool.evaluate_batch(batch, o);
    for (std::size_t k = 0; k < out.size(); ++k) results[index[k]] = std::move(out[k]);
  }
}

}  // namespace

EvalOptions eval_options(const EnvConfig& config) {
  EvalOptions o = config.eval;
  o.counters = config.counters_in_feedback;
  return o;
}

std::vector<Judged> judge(const std::vector<Judgement>& items, const EnvConfig& config, EvaluatorPool& pool) {
  std::vector<Judged> out(items.size());
  std::vector<EvalResult> results(items.size());
  std::vector<bool> with_baselines(items.size(), true);
  std::vector<std::optional<BaselineRecord>> lent(items.size());
  std::vector<std::size_t> todo;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (!items[i].action->ok) continue;
    todo.push_back(i);
    if (config.reuse_baselines) {
      lent[i] = BaselineCache::shared().find(items[i].task);
      with_baselines[i] = !lent[i].has_value();
    }
  }
  // Round 0 is the first evaluation; later rounds retry what came back as
  // infra_error, and a reused measurement from another kind of GPU (the
  // pool's GPUs differ) is replaced by one taken in the same run.
  for (int round = 0; !todo.empty(); ++round) {
    evaluate_round(todo, items, with_baselines, config, pool, results);
    std::vector<std::size_t> again;
    for (std::size_t i : todo) {
      EvalResult& r = results[i];
      out[i].attempts.push_back(attempt_record(r));
      if (r.status == Status::infra_error) {
        if (round < config.infra_retries) again.push_back(i);
        continue;
      }
      if (!with_baselines[i] && r.mode == "full" && r.device.name != lent[i]->device) {
        out[i].attempts.back()["rerun"] = "the reusable baselines were measured on " + lent[i]->device;
        with_baselines[i] = true;
        again.push_back(i);
        continue;
      }
      if (!with_baselines[i]) lend_baselines(r, *lent[i]);
      else if (config.reuse_baselines) BaselineCache::shared().remember(r);
    }
    todo = std::move(again);
  }
  for (std::size_t i = 0; i < items.size(); ++i) {
    const ParsedAction& a = *items[i].action;
    RewardInput in;
    in.format_ok = a.ok;
    in.format_error = a.error;
    if (a.ok) {
      out[i].result = std::move(results[i]);
      in.result = &*out[i].result;
      if (timed_in_full(*out[i].result)) {
        out[i].baseline_protocol = with_baselines[i] ? "interleaved" : "reused";
        if (!with_baselines[i]) out[i].baseline_source = lent[i]->to_json();
      }
    }
    out[i].reward = compute_reward(in, config.reward);
  }
  return out;
}

nlohmann::json judged_info(const ParsedAction& action, const Judged& j) {
  nlohmann::json info = {{"action_kind", action.kind},
                         {"format_ok", action.ok},
                         {"reward", j.reward.components},
                         {"masked", j.reward.masked},
                         {"result", j.result ? nlohmann::json(*j.result) : nlohmann::json(nullptr)},
                         {"attempts", j.attempts},
                         {"retried", j.attempts.size() > 1},
                         {"baseline_protocol", j.baseline_protocol},
                         // Every key on every step (docs/env.md): trainers gather them into columns.
                         {"format_error", action.ok ? std::string() : action.error},
                         {"fuzzy_matches", action.fuzzy_matches},
                         {"tile_config", action.tile_config},
                         {"baseline_source", j.baseline_source}};
  return info;
}

}  // namespace tessera::env::detail
