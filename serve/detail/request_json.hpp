#pragma once
// Strict reading of request bodies: an object with known keys and typed
// values, or a bad_input error (400) whose message names the field. Nothing
// a client sends can crash the service or reach the harness unchecked.
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "core/task.hpp"
#include "harness/evaluator.hpp"

namespace tessera::serve::detail {

// The body as a JSON object ("" is {} when `empty_ok`).
nlohmann::json parse_object(const std::string& body, bool empty_ok = false);
// bad_input naming the first key of `obj` not in `allowed`.
void only_keys(const nlohmann::json& obj, std::initializer_list<const char*> allowed, const std::string& where);

std::string require_string(const nlohmann::json& obj, const char* key, const std::string& where);
std::optional<std::string> optional_string(const nlohmann::json& obj, const char* key, const std::string& where);
std::optional<std::uint64_t> optional_uint(const nlohmann::json& obj, const char* key, const std::string& where);

// A task: the task object, a JSON text of one, or a shape "MxNxK" (layout TN).
Task read_task(const nlohmann::json& value, const std::string& where);
// Per-request evaluation options over the server's: every EvalOptions key
// (core/wire.hpp), read strictly, and none that checks less than the server
// does (check_no_weaker: verify_trials, timing, shape_generic).
EvalOptions read_eval_options(const nlohmann::json& value, const EvalOptions& base, const std::string& where);

}  // namespace tessera::serve::detail
