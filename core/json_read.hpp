#pragma once
// Integers read from records that came from outside (run folders, the
// worker's wire): nlohmann converts a float to an integer with a plain cast,
// which is undefined behaviour when the float is out of the integer's range
// (the run-log fuzzer found 3.3e19 in a seed field). These accept only JSON
// integers in range and fail as bad input otherwise.
#include <cstdint>
#include <limits>
#include <type_traits>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/error.hpp"

namespace tessera {

template <class Int>
Int integer_value(const nlohmann::json& j, const char* key, Int fallback) {
  if (!j.is_object()) fail_bad_input(fmt::format("expected a JSON object with '{}', got {}", key, j.type_name()));
  const auto it = j.find(key);
  if (it == j.end()) return fallback;  // a null is not a missing key: it fails below, as nlohmann's value() does
  const auto bad = [&] {
    fail_bad_input(fmt::format("'{}' must be an integer from {} to {}, got {}", key, std::numeric_limits<Int>::min(),
                               std::numeric_limits<Int>::max(), it->dump()));
  };
  if (it->is_number_unsigned()) {
    const auto v = it->get<std::uint64_t>();
    if (v > static_cast<std::uint64_t>(std::numeric_limits<Int>::max())) bad();
    return static_cast<Int>(v);
  }
  if (!it->is_number_integer()) bad();
  const auto v = it->get<std::int64_t>();
  if constexpr (std::numeric_limits<Int>::is_signed) {
    if (v < std::int64_t(std::numeric_limits<Int>::min()) || v > std::int64_t(std::numeric_limits<Int>::max())) bad();
  } else {
    if (v < 0 || static_cast<std::uint64_t>(v) > std::numeric_limits<Int>::max()) bad();
  }
  return static_cast<Int>(v);
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

}  // namespace tessera
