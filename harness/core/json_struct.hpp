#pragma once
// Declares-elsewhere, defined-here JSON conversions for plain structs.
// Like NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT, but not inline: the
// functions are declared in the struct's header and used from other
// libraries. Missing keys take the struct's defaults, so older records load.
#include <nlohmann/json.hpp>

#define TESSERA_JSON_STRUCT(Type, ...)                                                       \
  void to_json(nlohmann::json& nlohmann_json_j, const Type& nlohmann_json_t) {               \
    NLOHMANN_JSON_EXPAND(NLOHMANN_JSON_PASTE(NLOHMANN_JSON_TO, __VA_ARGS__))                 \
  }                                                                                          \
  void from_json(const nlohmann::json& nlohmann_json_j, Type& nlohmann_json_t) {             \
    const Type nlohmann_json_default_obj{};                                                  \
    NLOHMANN_JSON_EXPAND(NLOHMANN_JSON_PASTE(NLOHMANN_JSON_FROM_WITH_DEFAULT, __VA_ARGS__))  \
  }
