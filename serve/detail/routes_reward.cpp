// POST /get_reward: OpenRLHF's remote reward protocol. OpenRLHF posts
// {"query": [...], "prompts": [...], "labels": [...]} (query = prompt +
// response, as decoded text) and reads "rewards", "scores" and
// "extra_logs". Here a label names the task (a task object, its JSON text,
// or a shape "MxNxK") and the response is the action.
#include <fmt/format.h>

#include "core/error.hpp"
#include "serve/detail/context.hpp"
#include "serve/detail/request_json.hpp"
#include "serve/detail/reward_text.hpp"

namespace tessera::serve::detail {

namespace {
std::vector<nlohmann::json> optional_list(const nlohmann::json& body, const char* key, std::size_t n) {
  if (!body.contains(key) || body[key].is_null()) return std::vector<nlohmann::json>(n);
  const auto& v = body[key];
  if (!v.is_array()) fail_bad_input(fmt::format("get_reward.{} must be an array", key));
  if (v.size() != n)
    fail_bad_input(fmt::format("get_reward.{} has {} entries; query has {}", key, v.size(), n));
  return v.get<std::vector<nlohmann::json>>();
}

Task label_task(const nlohmann::json& label, const std::optional<Task>& fallback, std::size_t i) {
  if (label.is_null() || (label.is_string() && label.get<std::string>().empty())) {
    if (fallback) return *fallback;
    fail_bad_input(fmt::format("get_reward.labels[{}] is empty and the server has no --task", i));
  }
  return read_task(label, fmt::format("get_reward.labels[{}]", i));
}

// OpenRLHF reads every extra_logs value as a number per sample.
nlohmann::json reward_answer(const std::vector<EvalRecord>& records, double masked_reward) {
  nlohmann::json rewards = nlohmann::json::array(), scores = nlohmann::json::array();
  nlohmann::json speedup = nlohmann::json::array(), correct = nlohmann::json::array(),
                 compiled = nlohmann::json::array(), masked = nlohmann::json::array(),
                 format_ok = nlohmann::json::array(), attempts = nlohmann::json::array();
  for (const auto& r : records) {
    const Reward& reward = r.verdict->reward;
    const auto& k = reward.components;
    const bool is_correct = k.value("correct", false);
    rewards.push_back(reward.scalar ? *reward.scalar : masked_reward);
    scores.push_back(is_correct ? 1.0 : 0.0);
    speedup.push_back(k.contains("speedup") && k["speedup"].is_number() ? k["speedup"].get<double>() : 0.0);
    correct.push_back(is_correct ? 1 : 0);
    compiled.push_back(k.value("compiled", false) ? 1 : 0);
    masked.push_back(reward.masked ? 1 : 0);
    format_ok.push_back(k.value("format", false) ? 1 : 0);
    attempts.push_back(r.verdict->attempts.size());  // evaluation runs: 0 for a format failure
  }
  return {{"rewards", rewards},
          {"scores", scores},
          {"extra_logs",
           {{"speedup", speedup}, {"correct", correct}, {"compiled", compiled}, {"masked", masked},
            {"format_ok", format_ok}, {"attempts", attempts}}}};
}
}  // namespace

void handle_get_reward(Context& ctx, const std::shared_ptr<Call>& call) {
  const auto body = parse_object(call->request().body);
  only_keys(body, {"query", "prompts", "labels"}, "get_reward");
  if (!body.contains("query") || !body["query"].is_array() || body["query"].empty())
    fail_bad_input("get_reward.query must be a non-empty array of strings (prompt + response)");
  const std::size_t n = body["query"].size();
  if (n > ctx.options.max_batch) {
    call->respond(error_response(413, "batch_too_large",
                                 fmt::format("get_reward takes at most {} queries at once; got {}", ctx.options.max_batch, n)));
    return;
  }
  const auto prompts = optional_list(body, "prompts", n);
  const auto labels = optional_list(body, "labels", n);
  std::vector<EvalItem> items;
  for (std::size_t i = 0; i < n; ++i) {
    const auto& q = body["query"][i];
    if (!q.is_string()) fail_bad_input(fmt::format("get_reward.query[{}] must be a string", i));
    if (!prompts[i].is_null() && !prompts[i].is_string())
      fail_bad_input(fmt::format("get_reward.prompts[{}] must be a string", i));
    EvalItem item;
    item.task = label_task(labels[i], ctx.options.default_task, i);
    item.action = response_text(q.get<std::string>(), prompts[i].is_string() ? prompts[i].get<std::string>() : "");
    item.config = ctx.backend.config;
    items.push_back(std::move(item));
  }
  const auto deadline = call->deadline;
  const double masked_reward = ctx.options.masked_reward;
  ctx.run(call, n, [&ctx, items = std::move(items), deadline, masked_reward](Finish finish) mutable {
    evaluate_all(ctx, std::move(items), deadline, [finish, masked_reward](std::vector<EvalRecord> records) {
      finish_on_throw(finish, [&] {
        for (const auto& r : records) {
          if (r.failed()) {
            auto [response, keep] = record_response(r);
            return finish(std::move(response), keep);
          }
        }
        finish(json_response(200, reward_answer(records, masked_reward)), true);
      });
    });
  });
}

}  // namespace tessera::serve::detail
