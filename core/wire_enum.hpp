#pragma once
// Enums with names: one table per enum, read in one place. A name the table
// does not hold is bad_input naming it and every accepted name; the first
// name of a value is the one written.
#include <cstddef>
#include <string>
#include <string_view>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/error.hpp"

namespace tessera {

template <class E>
struct EnumName {
  E value;
  const char* name;
};

template <class E, std::size_t N>
std::string name_of(E value, const EnumName<E> (&names)[N]) {
  for (const auto& n : names)
    if (n.value == value) return n.name;
  return "?";  // unreachable while every value has a name
}

// `what` says what the name names ("evaluation mode", "candidate kind").
template <class E, std::size_t N>
E parse_enum(std::string_view name, const EnumName<E> (&names)[N], std::string_view what) {
  std::string list;
  for (const auto& n : names) {
    if (name == n.name) return n.value;
    list += fmt::format("{}{}", list.empty() ? "" : ", ", n.name);
  }
  fail_bad_input(fmt::format("unknown {} '{}' ({})", what, name, list));
}

// The same for a JSON value, which must be a string.
template <class E, std::size_t N>
E parse_enum_json(const nlohmann::json& j, const EnumName<E> (&names)[N], std::string_view what) {
  if (!j.is_string()) fail_bad_input(fmt::format("a {} is a name, not {}", what, j.type_name()));
  return parse_enum(std::string_view(j.get_ref<const std::string&>()), names, what);
}

}  // namespace tessera
