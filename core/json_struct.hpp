#pragma once
// Declares-elsewhere, defined-here JSON conversions for plain structs.
// Like NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT, but not inline: the
// functions are declared in the struct's header and used from other
// libraries. Missing keys take the struct's defaults, so older records load;
// integer fields accept only JSON integers in range (core/json_read.hpp).
#include <nlohmann/json.hpp>

#include "core/json_read.hpp"

#define TESSERA_JSON_FROM(v1) \
  ::tessera::read_field(nlohmann_json_j, #v1, nlohmann_json_t.v1, nlohmann_json_default_obj.v1);

#define TESSERA_JSON_STRUCT(Type, ...)                                                       \
  void to_json(nlohmann::json& nlohmann_json_j, const Type& nlohmann_json_t) {               \
    NLOHMANN_JSON_EXPAND(NLOHMANN_JSON_PASTE(NLOHMANN_JSON_TO, __VA_ARGS__))                 \
  }                                                                                          \
  void from_json(const nlohmann::json& nlohmann_json_j, Type& nlohmann_json_t) {             \
    const Type nlohmann_json_default_obj{};                                                  \
    NLOHMANN_JSON_EXPAND(NLOHMANN_JSON_PASTE(TESSERA_JSON_FROM, __VA_ARGS__))                  \
  }
