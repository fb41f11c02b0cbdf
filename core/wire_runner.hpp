#pragma once
// The messages between the sandbox worker and the TU runner (`tessera
// __runner`, worker/runner_main.cpp), one JSON line each, read strictly on
// both sides (core/json_struct.hpp). The runner runs a translation unit's
// host code: what it sends after "ready" may have been written by the
// candidate, so the worker takes a line that does not read as a RunnerEvent
// for one tessera did not write (worker/tu_replay.cpp).
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "core/json_struct.hpp"
#include "core/result.hpp"

namespace tessera {

// worker -> runner, first line: the shared object to load and the shape its
// tessera_workspace_bytes is asked about.
struct RunnerOpen {
  std::string artifact;
  std::int64_t m = 0, n = 0, k = 0;
};
TESSERA_JSON_DECLARE(RunnerOpen);

enum class RunnerOp { capture, quit };
void to_json(nlohmann::json& j, RunnerOp op);
void from_json(const nlohmann::json& j, RunnerOp& op);

// worker -> runner, every later line: capture one call of tessera_launch, or quit.
struct RunnerCommand {
  RunnerOp op = RunnerOp::capture;
  long long id = 0;    // capture: echoed in the answer
  std::string params;  // capture: the TesseraGemmParams block, hex (worker/tu_graph.hpp to_hex)
};
TESSERA_JSON_DECLARE(RunnerCommand);

enum class RunnerEventKind { ready, opened, captured, error };
std::string to_string(RunnerEventKind e);
void to_json(nlohmann::json& j, RunnerEventKind e);
void from_json(const nlohmann::json& j, RunnerEventKind& e);

// runner -> worker: ready (confined, about to load the candidate), opened
// (loaded; its workspace), captured (one call), error (why it stopped).
struct RunnerEvent {
  RunnerEventKind event = RunnerEventKind::error;
  unsigned long long workspace_bytes = 0;  // opened
  long long id = 0;                        // captured: the command's id
  nlohmann::json call;                     // captured: worker::CapturedCall as JSON (checked on its own)
  Status status = Status::launch_error;    // error
  std::string reason;                      // error
};
TESSERA_JSON_DECLARE(RunnerEvent);

RunnerEvent runner_error(Status status, std::string reason);

}  // namespace tessera
