#include "serve/detail/request_json.hpp"

#include <fmt/format.h>

#include "core/counter_set.hpp"
#include "core/error.hpp"

namespace tessera::serve::detail {

namespace {
constexpr int kMaxVerifyTrials = 64;  // a client may ask for more verification, within reason

const char* type_name(const nlohmann::json& v) { return v.type_name(); }

bool read_bool(const nlohmann::json& obj, const char* key, const std::string& where, bool fallback) {
  if (!obj.contains(key)) return fallback;
  if (!obj[key].is_boolean()) fail_bad_input(fmt::format("{}.{} must be true or false", where, key));
  return obj[key].get<bool>();
}
}  // namespace

nlohmann::json parse_object(const std::string& body, bool empty_ok) {
  if (body.empty() && empty_ok) return nlohmann::json::object();
  nlohmann::json j = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) fail_bad_input("the body is not valid JSON");
  if (!j.is_object()) fail_bad_input(fmt::format("the body must be a JSON object, not {}", type_name(j)));
  return j;
}

void only_keys(const nlohmann::json& obj, std::initializer_list<const char*> allowed, const std::string& where) {
  for (const auto& [k, v] : obj.items()) {
    bool known = false;
    for (const char* a : allowed) known = known || k == a;
    if (known) continue;
    std::string list;
    for (const char* a : allowed) list += std::string(list.empty() ? "" : ", ") + a;
    fail_bad_input(fmt::format("{}: unknown field '{}' (known: {})", where, k, list));
  }
}

std::string require_string(const nlohmann::json& obj, const char* key, const std::string& where) {
  if (!obj.contains(key)) fail_bad_input(fmt::format("{}: missing field '{}'", where, key));
  if (!obj[key].is_string()) fail_bad_input(fmt::format("{}.{} must be a string, not {}", where, key, type_name(obj[key])));
  return obj[key].get<std::string>();
}

std::optional<std::string> optional_string(const nlohmann::json& obj, const char* key, const std::string& where) {
  if (!obj.contains(key) || obj[key].is_null()) return std::nullopt;
  return require_string(obj, key, where);
}

std::optional<std::uint64_t> optional_uint(const nlohmann::json& obj, const char* key, const std::string& where) {
  if (!obj.contains(key) || obj[key].is_null()) return std::nullopt;
  const auto& v = obj[key];
  if (!v.is_number_unsigned() && !(v.is_number_integer() && v.get<std::int64_t>() >= 0))
    fail_bad_input(fmt::format("{}.{} must be a non-negative integer", where, key));
  return v.get<std::uint64_t>();
}

Task read_task(const nlohmann::json& value, const std::string& where) {
  try {
    if (value.is_object()) return parse_task(value);
    if (value.is_string()) {
      const auto s = value.get<std::string>();
      if (!s.empty() && s.front() == '{') return parse_task_string(s);
      return task_from_shape(s);
    }
  } catch (const Error& e) {
    fail_bad_input(fmt::format("{}: {}", where, e.what()));
  }
  fail_bad_input(fmt::format("{} must be a task object or a shape such as \"4096x4096x4096\"", where));
}

EvalOptions read_eval_options(const nlohmann::json& value, const EvalOptions& base, const std::string& where) {
  if (value.is_null()) return base;
  if (!value.is_object()) fail_bad_input(where + " must be an object");
  only_keys(value, {"counters", "counter_set", "hot", "verify_trials", "shape_generic", "compile_only"}, where);
  EvalOptions o = base;
  o.counters = read_bool(value, "counters", where, o.counters);
  o.hot = read_bool(value, "hot", where, o.hot);
  o.shape_generic = read_bool(value, "shape_generic", where, o.shape_generic);
  o.compile_only = read_bool(value, "compile_only", where, o.compile_only);
  if (value.contains("counter_set")) {
    if (!value["counter_set"].is_string()) fail_bad_input(where + ".counter_set must be a string");
    try {
      o.counter_set = to_string(parse_counter_set(value["counter_set"].get<std::string>()));
    } catch (const Error& e) {
      fail_bad_input(fmt::format("{}.counter_set: {}", where, e.what()));
    }
  }
  if (value.contains("verify_trials")) {
    const auto& v = value["verify_trials"];
    // Fewer trials than the server's would weaken the check the reward rests on.
    if (!v.is_number_integer() || v.get<std::int64_t>() < base.verify_trials || v.get<std::int64_t>() > kMaxVerifyTrials)
      fail_bad_input(fmt::format("{}.verify_trials must be an integer from {} to {}", where, base.verify_trials,
                                 kMaxVerifyTrials));
    o.verify_trials = v.get<int>();
  }
  return o;
}

}  // namespace tessera::serve::detail
