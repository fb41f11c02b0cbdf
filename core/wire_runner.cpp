#include "core/wire_runner.hpp"

#include "core/wire_enum.hpp"

namespace tessera {

namespace {

constexpr EnumName<RunnerOp> kOpNames[] = {{RunnerOp::capture, "capture"}, {RunnerOp::quit, "quit"}};
constexpr EnumName<RunnerEventKind> kEventNames[] = {{RunnerEventKind::ready, "ready"},
                                                     {RunnerEventKind::opened, "opened"},
                                                     {RunnerEventKind::captured, "captured"},
                                                     {RunnerEventKind::error, "error"}};

}  // namespace

TESSERA_JSON_STRUCT(RunnerOpen, artifact, m, n, k)

void to_json(nlohmann::json& j, RunnerOp op) { j = name_of(op, kOpNames); }
void from_json(const nlohmann::json& j, RunnerOp& op) { op = parse_enum_json(j, kOpNames, "runner op"); }

TESSERA_JSON_STRUCT(RunnerCommand, op, id, params)

std::string to_string(RunnerEventKind e) { return name_of(e, kEventNames); }
void to_json(nlohmann::json& j, RunnerEventKind e) { j = to_string(e); }
void from_json(const nlohmann::json& j, RunnerEventKind& e) { e = parse_enum_json(j, kEventNames, "runner event"); }

TESSERA_JSON_STRUCT(RunnerEvent, event, workspace_bytes, id, call, status, reason)

RunnerEvent runner_error(Status status, std::string reason) {
  RunnerEvent e;
  e.event = RunnerEventKind::error;
  e.status = status;
  e.reason = std::move(reason);
  return e;
}

}  // namespace tessera
