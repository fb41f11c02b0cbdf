#pragma once
// What one stateless evaluation answers (docs/serve.md, "evaluation record"):
// the judged record of env/judge.hpp (the same one a session step's info
// holds) and the service's own latencies. A typed error takes the place of
// all of it when the evaluation could not be done (the deadline passed while
// it was queued).
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "env/judge.hpp"

namespace tessera::serve::detail {

struct EvalRecord {
  std::optional<env::Verdict> verdict;  // absent when a typed error took its place
  double queue_ms = 0;        // waiting for a compile thread and for an evaluator
  double compile_ahead_ms = 0;  // compiled on the CPU pool before the evaluator took it
  double total_ms = 0;        // admission to answer
  std::string error_type;     // a typed error instead of a record (deadline_exceeded, internal)
  std::string error_message;

  bool failed() const { return !error_type.empty(); }
  // The verdict's status ("format_error" when the action is not a kernel), or the error type.
  std::string status() const;
  const EvalResult* result() const { return verdict && verdict->result ? &*verdict->result : nullptr; }
  // The judged record with "latency_ms", or {"error": {"type", "message"}}.
  nlohmann::json to_json() const;
};

}  // namespace tessera::serve::detail
