#pragma once
// What one stateless evaluation answers (docs/serve.md, "evaluation record"):
// the action's kind, the harness's result record (absent when the action
// was not a kernel), the reward with its components, and the service's own
// latencies. A typed error takes the place of all of it when the evaluation
// could not be done (the deadline passed while it was queued).
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "core/result.hpp"
#include "core/reward.hpp"

namespace tessera::serve::detail {

struct EvalRecord {
  std::optional<EvalResult> result;
  std::string action_kind;   // device_only | diff | tile_config | translation_unit; empty for a format failure
  std::string format_error;  // why the action is not a kernel
  Reward reward;
  int attempts = 0;           // evaluators it took (2: the first one died)
  double queue_ms = 0;        // waiting for a compile thread and for an evaluator
  double compile_ahead_ms = 0;  // compiled on the CPU pool before the evaluator took it
  double total_ms = 0;        // admission to answer
  std::string error_type;     // a typed error instead of a record (deadline_exceeded, internal)
  std::string error_message;

  bool failed() const { return !error_type.empty(); }
  // The result's status, "format_error", or the error type.
  std::string status() const;
  nlohmann::json to_json() const;
};

}  // namespace tessera::serve::detail
