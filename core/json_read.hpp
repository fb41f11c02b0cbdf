#pragma once
// Reading JSON that came from outside this process.
//
// Integers (run folders, the worker's wire): nlohmann converts a float to an
// integer with a plain cast, which is undefined behaviour when the float is
// out of the integer's range (the run-log fuzzer found 3.3e19 in a seed
// field). integer_value accepts only JSON integers in range and fails as bad
// input otherwise.
//
// Strict reading (messages between tessera's processes, and options from
// Python and HTTP): a key the struct does not have is refused with its name,
// so that a misspelt option never silently keeps its default, and a value of
// the wrong type is refused with its key's name. Missing keys keep the value
// the struct already holds (its defaults, or a base the caller started from).
// The lenient reader (from_json) stays for records on disk written by older
// versions (run folders, caches), which may carry keys since retired.
#include <concepts>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/error.hpp"

namespace tessera {

// One integer value; `what` names it in the error.
template <class Int>
Int integer_of(const nlohmann::json& v, std::string_view what) {
  const auto bad = [&] {
    fail_bad_input(fmt::format("'{}' must be an integer from {} to {}, got {}", what, std::numeric_limits<Int>::min(),
                               std::numeric_limits<Int>::max(), v.dump()));
  };
  if (v.is_number_unsigned()) {
    const auto u = v.get<std::uint64_t>();
    if (u > static_cast<std::uint64_t>(std::numeric_limits<Int>::max())) bad();
    return static_cast<Int>(u);
  }
  if (!v.is_number_integer()) bad();
  const auto s = v.get<std::int64_t>();
  if constexpr (std::numeric_limits<Int>::is_signed) {
    if (s < std::int64_t(std::numeric_limits<Int>::min()) || s > std::int64_t(std::numeric_limits<Int>::max())) bad();
  } else {
    if (s < 0 || static_cast<std::uint64_t>(s) > std::numeric_limits<Int>::max()) bad();
  }
  return static_cast<Int>(s);
}

template <class Int>
Int integer_value(const nlohmann::json& j, const char* key, Int fallback) {
  if (!j.is_object()) fail_bad_input(fmt::format("expected a JSON object with '{}', got {}", key, j.type_name()));
  const auto it = j.find(key);
  if (it == j.end()) return fallback;  // a null is not a missing key: it fails below, as nlohmann's value() does
  return integer_of<Int>(*it, key);
}

// One field of a record: integers through integer_value, anything else as
// nlohmann reads it; a missing key keeps `fallback`.
template <class T>
void read_field(const nlohmann::json& j, const char* key, T& out, const T& fallback) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>)
    out = integer_value<T>(j, key, fallback);
  else
    out = j.value(key, fallback);
}

// ---- Lenient reading of records on disk ------------------------------------

// A field of a record another version (or a hand) wrote: absent, or of
// another type, it reads as `fallback`, so that a report or a training set is
// still made of what is readable (json::value() throws on a type mismatch).
inline const nlohmann::json& field_or_null(const nlohmann::json& j, const char* key) {
  static const nlohmann::json null;
  if (!j.is_object()) return null;
  const auto it = j.find(key);
  return it == j.end() ? null : *it;
}
inline double number_or(const nlohmann::json& j, const char* key, double fallback) {
  const auto& v = field_or_null(j, key);
  return v.is_number() ? v.get<double>() : fallback;
}
// JSON integers only (a float outside the range would be undefined behaviour).
inline long long integer_or(const nlohmann::json& j, const char* key, long long fallback) {
  const auto& v = field_or_null(j, key);
  if (v.is_number_unsigned())
    return v.get<std::uint64_t>() > std::uint64_t(std::numeric_limits<long long>::max()) ? fallback
                                                                                         : (long long)v.get<std::uint64_t>();
  return v.is_number_integer() ? v.get<long long>() : fallback;
}
inline bool bool_or(const nlohmann::json& j, const char* key, bool fallback) {
  const auto& v = field_or_null(j, key);
  return v.is_boolean() ? v.get<bool>() : fallback;
}
inline std::string string_or(const nlohmann::json& j, const char* key, const std::string& fallback) {
  const auto& v = field_or_null(j, key);
  return v.is_string() ? v.get<std::string>() : fallback;
}

// ---- Strict reading ---------------------------------------------------------

// A type with a strict reader: from_json_strict(j, value, where), found by
// argument-dependent lookup (TESSERA_JSON_STRUCT defines one per struct).
template <class T>
concept StrictJson = requires(const nlohmann::json& j, T& t, const std::string& where) {
  from_json_strict(j, t, where);
};

namespace detail {
// A list of structs with strict readers.
template <class T>
struct is_strict_list : std::false_type {};
template <class T, class A>
struct is_strict_list<std::vector<T, A>> : std::bool_constant<StrictJson<T>> {};

// "a.b" for a key inside `where`, the key alone at the top.
inline std::string json_path(const std::string& where, std::string_view key) {
  return where.empty() ? std::string(key) : fmt::format("{}.{}", where, key);
}

// nlohmann's message without its "[json.exception.type_error.302] " prefix.
inline std::string json_error_text(const nlohmann::json::exception& e) {
  const std::string s = e.what();
  const auto end = s.find("] ");
  return end == std::string::npos ? s : s.substr(end + 2);
}
}  // namespace detail

// bad_input naming the first key of `j` that is not in `known` (and the known
// ones), or naming what `j` is when it is not an object.
inline void reject_unknown_keys(const nlohmann::json& j, std::span<const char* const> known, const std::string& where) {
  if (!j.is_object()) fail_bad_input(fmt::format("{} must be a JSON object, not {}", where, j.type_name()));
  for (const auto& [key, value] : j.items()) {
    bool found = false;
    for (const char* k : known) found = found || key == k;
    if (found) continue;
    std::string list;
    for (const char* k : known) list += fmt::format("{}{}", list.empty() ? "" : ", ", k);
    fail_bad_input(fmt::format("{}: unknown key '{}' (known: {})", where, key, list));
  }
}

// One value read strictly into `out`; `path` names it in every error.
template <class T>
void read_value_strict(const nlohmann::json& v, T& out, const std::string& path) {
  if constexpr (StrictJson<T>) {
    from_json_strict(v, out, path);
  } else if constexpr (detail::is_strict_list<T>::value) {
    if (!v.is_array()) fail_bad_input(fmt::format("{} must be a list, not {}", path, v.type_name()));
    T items(v.size());
    for (std::size_t i = 0; i < v.size(); ++i) read_value_strict(v[i], items[i], fmt::format("{}[{}]", path, i));
    out = std::move(items);
  } else if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    out = integer_of<T>(v, path);
  } else if constexpr (std::is_floating_point_v<T>) {
    // nlohmann would read true as 1.0
    if (!v.is_number()) fail_bad_input(fmt::format("{} must be a number, not {}", path, v.type_name()));
    out = v.get<T>();
  } else {
    T value{};
    try {
      value = v.get<T>();
    } catch (const nlohmann::json::exception& e) {
      fail_bad_input(fmt::format("{}: {}", path, detail::json_error_text(e)));
    } catch (const Error& e) {
      fail_bad_input(fmt::format("{}: {}", path, e.what()));
    }
    // nlohmann maps an unknown enum name to the enum's first value: only a
    // name that writes back as itself is one.
    if constexpr (std::is_enum_v<T>)
      if (nlohmann::json(value) != v) fail_bad_input(fmt::format("{}: unknown value {}", path, v.dump()));
    out = std::move(value);
  }
}

// One field of a struct read strictly: a missing key leaves `out` as it is.
template <class T>
void read_field_strict(const nlohmann::json& j, const char* key, T& out, const std::string& where) {
  const auto it = j.find(key);
  if (it != j.end()) read_value_strict(*it, out, detail::json_path(where, key));
}

// A T from `j`, strictly: missing keys keep T's defaults; `where` names the
// message in errors ("pool options", "worker request").
template <StrictJson T>
T read_strict(const nlohmann::json& j, const std::string& where) {
  T out;
  from_json_strict(j, out, where);
  return out;
}

// `base` with the keys of `j` read over it, strictly.
template <StrictJson T>
T read_strict(const nlohmann::json& j, const std::string& where, const T& base) {
  T out = base;
  from_json_strict(j, out, where);
  return out;
}

}  // namespace tessera
