// POST /get_reward: OpenRLHF's remote reward protocol. OpenRLHF posts
// {"query": [...], "prompts": [...], "labels": [...]} (query = prompt +
// response, as decoded text) and reads "rewards", "scores" and
// "extra_logs". Here a label names the task (a task object, its JSON text,
// "MxNxK" or a task id such as hgemm_4096x4096x4096_TN_none) and the
// response is the action. A response that cannot be told apart from its
// prompt is masked, never scored as the whole query; every fallback is
// counted in extra_logs and logged.
#include <map>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

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

bool empty_label(const nlohmann::json& label) {
  return label.is_null() || (label.is_string() && label.get<std::string>().empty());
}

// The service's log says it too: OpenRLHF logs a failed call only at INFO
// level and then fails elsewhere.
[[noreturn]] void fail_logged(const std::string& message) {
  spdlog::warn("get_reward: 400: {}", message);
  fail_bad_input(message);
}

Task label_task(const nlohmann::json& label, const std::optional<Task>& fallback, std::size_t i) {
  if (empty_label(label)) {
    if (fallback) return *fallback;
    fail_logged(fmt::format(
        "get_reward.labels[{}] is empty and the server has no task: name the dataset column that holds each "
        "prompt's task with OpenRLHF's --data.label_key (values such as \"4096x4096x4096\", "
        "\"hgemm_4096x4096x4096_TN_none\" or a task object), or start tessera serve with --task or --shape",
        i));
  }
  try {
    return read_task(label, fmt::format("get_reward.labels[{}]", i));
  } catch (const Error& e) {
    fail_logged(e.what());
  }
}

// One sample of the answer: evaluated (a record) or masked because its
// response was not found in the query.
struct Sample {
  std::optional<std::size_t> record;  // index into the evaluated records
  ResponseFrom from = ResponseFrom::prompt;
  bool task_fallback = false;         // the label was empty: the server's task applied
};

// OpenRLHF reads every extra_logs value as a number per sample.
nlohmann::json reward_answer(const std::vector<Sample>& samples, const std::vector<EvalRecord>& records,
                             double masked_reward) {
  nlohmann::json rewards = nlohmann::json::array(), scores = nlohmann::json::array();
  std::map<std::string, nlohmann::json> logs;
  for (const char* k :
       {"speedup", "correct", "compiled", "masked", "format_ok", "attempts", "response_fallback", "task_fallback"})
    logs[k] = nlohmann::json::array();
  for (const auto& s : samples) {
    Reward none;
    none.masked = true;
    const env::Verdict* verdict = s.record ? &*records[*s.record].verdict : nullptr;
    const Reward& reward = verdict ? verdict->reward : none;
    const auto& k = reward.components;
    const bool is_correct = k.value("correct", false);
    rewards.push_back(reward.scalar ? *reward.scalar : masked_reward);
    scores.push_back(is_correct ? 1.0 : 0.0);
    logs["speedup"].push_back(k.contains("speedup") && k["speedup"].is_number() ? k["speedup"].get<double>() : 0.0);
    logs["correct"].push_back(is_correct ? 1 : 0);
    logs["compiled"].push_back(k.value("compiled", false) ? 1 : 0);
    logs["masked"].push_back(reward.masked ? 1 : 0);
    logs["format_ok"].push_back(k.value("format", false) ? 1 : 0);
    logs["attempts"].push_back(verdict ? verdict->attempts.size() : 0);  // evaluation runs: 0 for a format failure
    logs["response_fallback"].push_back(static_cast<int>(s.from));
    logs["task_fallback"].push_back(s.task_fallback ? 1 : 0);
  }
  return {{"rewards", rewards}, {"scores", scores}, {"extra_logs", logs}};
}

// One line per request that needed a fallback.
void log_fallbacks(const std::vector<Sample>& samples) {
  std::size_t tail = 0, turn = 0, lost = 0, task = 0;
  for (const auto& s : samples) {
    tail += s.from == ResponseFrom::prompt_tail;
    turn += s.from == ResponseFrom::assistant_turn;
    lost += s.from == ResponseFrom::not_found;
    task += s.task_fallback;
  }
  if (tail + turn + lost + task == 0) return;
  spdlog::warn(
      "get_reward: of {} queries, {} without the whole prompt (truncated or decoded differently; response taken "
      "after the prompt's tail), {} after the last assistant turn, {} with no response found (masked), {} with no "
      "label (the server's task)",
      samples.size(), tail, turn, lost, task);
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
  std::vector<Sample> samples(n);
  for (std::size_t i = 0; i < n; ++i) {
    const auto& q = body["query"][i];
    if (!q.is_string()) fail_bad_input(fmt::format("get_reward.query[{}] must be a string", i));
    if (!prompts[i].is_null() && !prompts[i].is_string())
      fail_bad_input(fmt::format("get_reward.prompts[{}] must be a string", i));
    EvalItem item;
    item.task = label_task(labels[i], ctx.options.default_task, i);
    samples[i].task_fallback = empty_label(labels[i]);
    auto split = split_response(q.get<std::string>(), prompts[i].is_string() ? prompts[i].get<std::string>() : "");
    samples[i].from = split.from;
    if (split.from == ResponseFrom::not_found) continue;
    item.action = std::move(split.text);
    item.config = ctx.backend.config;
    samples[i].record = items.size();
    items.push_back(std::move(item));
  }
  log_fallbacks(samples);
  const auto deadline = call->deadline;
  const double masked_reward = ctx.options.masked_reward;
  const std::size_t evaluations = items.size();
  auto work = [&ctx, items = std::move(items), samples = std::move(samples), deadline,
               masked_reward](Finish finish) mutable {
    // Every response lost: nothing to evaluate (evaluate_all waits for at least one record).
    if (items.empty()) return finish(json_response(200, reward_answer(samples, {}, masked_reward)), true);
    evaluate_all(ctx, std::move(items), deadline, [finish, samples, masked_reward](std::vector<EvalRecord> records) {
      finish_on_throw(finish, [&] {
        for (const auto& r : records) {
          if (r.failed()) {
            auto [response, keep] = record_response(r);
            return finish(std::move(response), keep);
          }
        }
        finish(json_response(200, reward_answer(samples, records, masked_reward)), true);
      });
    });
  };
  ctx.run(call, evaluations, std::move(work));
}

}  // namespace tessera::serve::detail
