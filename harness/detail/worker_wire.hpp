#pragma once
// The harness's reading of the worker's JSON lines, kept apart from the
// pipes and the process so that it can be tested and fuzzed as it is: a
// worker's output is outside data (it runs candidate device code and, in a
// broken worker, anything may arrive). Never throws.
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace tessera::detail {

struct WorkerLine {
  // ignored: not a JSON object, or not an event at all; other: an event the
  // current wait is not about (skipped, as before).
  enum class Kind { ignored, heartbeat, fatal, answer, other };
  Kind kind = Kind::ignored;
  nlohmann::json event;  // the parsed line, for every kind but ignored
  std::string phase;     // heartbeat: what the worker is doing
  std::string reason;    // fatal: why the worker gives up
};

// Takes the next complete line (without its '\n') out of `buffer`; nullopt,
// leaving `buffer` as it is, when no line is complete yet.
std::optional<std::string> take_line(std::string& buffer);

// What one line means while the harness waits for `answer_event`.
WorkerLine classify_worker_line(std::string_view line, std::string_view answer_event);

}  // namespace tessera::detail
