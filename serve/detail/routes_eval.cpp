// POST /v1/evaluate and POST /v1/evaluate/batch: stateless evaluations of
// actions (the same text a session step takes) against a task, judged under
// the service's EnvConfig with the request's evaluation options.
#include <fmt/format.h>

#include "core/error.hpp"
#include "env/judge.hpp"
#include "serve/detail/context.hpp"
#include "serve/detail/request_json.hpp"

namespace tessera::serve::detail {

namespace {
// `base` with the evaluation options of a request (null: none).
env::EnvConfig with_options(const env::EnvConfig& base, const nlohmann::json& options, const std::string& where) {
  return env::with_eval_options(base, read_eval_options(options, env::judged_eval_options(base), where));
}

// One {"task", "action", "options"} object; batch items start from the
// batch's options.
EvalItem read_item(const nlohmann::json& obj, const env::EnvConfig& base, const std::string& where) {
  if (!obj.is_object()) fail_bad_input(where + " must be an object");
  only_keys(obj, {"task", "action", "options"}, where);
  if (!obj.contains("task")) fail_bad_input(where + ": missing field 'task'");
  EvalItem item;
  item.task = read_task(obj["task"], where + ".task");
  item.action = require_string(obj, "action", where);
  item.config = with_options(base, obj.value("options", nlohmann::json()), where + ".options");
  return item;
}

}  // namespace

void handle_evaluate(Context& ctx, const std::shared_ptr<Call>& call) {
  const auto body = parse_object(call->request().body);
  EvalItem item = read_item(body, ctx.backend.config, "evaluate");
  const auto deadline = call->deadline;
  ctx.run(call, 1, [&ctx, item = std::move(item), deadline](Finish finish) mutable {
    std::vector<EvalItem> items;
    items.push_back(std::move(item));
    evaluate_all(ctx, std::move(items), deadline, [finish](std::vector<EvalRecord> records) {
      finish_on_throw(finish, [&] {
        auto [response, keep] = record_response(records.front());
        finish(std::move(response), keep);
      });
    });
  });
}

void handle_batch(Context& ctx, const std::shared_ptr<Call>& call) {
  const auto body = parse_object(call->request().body);
  only_keys(body, {"items", "options"}, "batch");
  const env::EnvConfig base = with_options(ctx.backend.config, body.value("options", nlohmann::json()), "batch.options");
  if (!body.contains("items") || !body["items"].is_array() || body["items"].empty())
    fail_bad_input("batch.items must be a non-empty array of {task, action, options}");
  if (body["items"].size() > ctx.options.max_batch) {
    call->respond(error_response(413, "batch_too_large",
                                 fmt::format("a batch holds at most {} items; this one has {}", ctx.options.max_batch,
                                             body["items"].size())));
    return;
  }
  std::vector<EvalItem> items;
  for (std::size_t i = 0; i < body["items"].size(); ++i)
    items.push_back(read_item(body["items"][i], base, fmt::format("batch.items[{}]", i)));
  const auto deadline = call->deadline;
  const std::size_t n = items.size();
  ctx.run(call, n, [&ctx, items = std::move(items), deadline](Finish finish) mutable {
    evaluate_all(ctx, std::move(items), deadline, [finish](std::vector<EvalRecord> records) {
      finish_on_throw(finish, [&] {
        bool keep = true;
        auto response = batch_response(records, keep);
        finish(std::move(response), keep);
      });
    });
  });
}

}  // namespace tessera::serve::detail
