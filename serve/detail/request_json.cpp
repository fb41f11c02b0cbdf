#include "serve/detail/request_json.hpp"

#include <fmt/format.h>

#include "core/error.hpp"

namespace tessera::serve::detail {

namespace {
const char* type_name(const nlohmann::json& v) { return v.type_name(); }
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
  const EvalOptions asked = parse_eval_options(value, base, where);
  check_no_weaker(asked, base, where);
  return asked;
}

}  // namespace tessera::serve::detail
