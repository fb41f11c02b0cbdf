#pragma once
// Declares-elsewhere, defined-here JSON conversions for plain structs.
// Like NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT, but not inline: the
// functions are declared in the struct's header (TESSERA_JSON_DECLARE) and
// used from other libraries. Three functions per struct:
//   to_json           every field;
//   from_json         lenient, for records on disk: missing keys take the
//                     struct's defaults, unknown keys are ignored (a record of
//                     an older version still loads);
//   from_json_strict  for messages and options (core/json_read.hpp): unknown
//                     keys and wrong types are bad_input naming the key,
//                     missing keys keep what the struct holds, and nested
//                     structs with a strict reader are read strictly too.
// Integer fields accept only JSON integers in range (core/json_read.hpp).
#include <string>

#include <nlohmann/json.hpp>

#include "core/json_read.hpp"

#define TESSERA_JSON_FROM(v1) \
  ::tessera::read_field(nlohmann_json_j, #v1, nlohmann_json_t.v1, nlohmann_json_default_obj.v1);
#define TESSERA_JSON_FROM_STRICT(v1) ::tessera::read_field_strict(nlohmann_json_j, #v1, nlohmann_json_t.v1, where);
#define TESSERA_JSON_NAME(v1) #v1,

#define TESSERA_JSON_STRUCT(Type, ...)                                                       \
  void to_json(nlohmann::json& nlohmann_json_j, const Type& nlohmann_json_t) {               \
    NLOHMANN_JSON_EXPAND(NLOHMANN_JSON_PASTE(NLOHMANN_JSON_TO, __VA_ARGS__))                 \
  }                                                                                          \
  void from_json(const nlohmann::json& nlohmann_json_j, Type& nlohmann_json_t) {             \
    const Type nlohmann_json_default_obj{};                                                  \
    NLOHMANN_JSON_EXPAND(NLOHMANN_JSON_PASTE(TESSERA_JSON_FROM, __VA_ARGS__))                  \
  }                                                                                          \
  void from_json_strict(const nlohmann::json& nlohmann_json_j, Type& nlohmann_json_t,        \
                        const std::string& where) {                                          \
    static constexpr const char* keys[] = {                                                  \
        NLOHMANN_JSON_EXPAND(NLOHMANN_JSON_PASTE(TESSERA_JSON_NAME, __VA_ARGS__))};          \
    ::tessera::reject_unknown_keys(nlohmann_json_j, keys, where);                            \
    NLOHMANN_JSON_EXPAND(NLOHMANN_JSON_PASTE(TESSERA_JSON_FROM_STRICT, __VA_ARGS__))         \
  }

// The declarations for a header (in the struct's namespace).
#define TESSERA_JSON_DECLARE(Type)                                 \
  void to_json(nlohmann::json& j, const Type& v);                  \
  void from_json(const nlohmann::json& j, Type& v);                \
  void from_json_strict(const nlohmann::json& j, Type& v, const std::string& where)
