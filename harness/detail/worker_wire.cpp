#include "harness/detail/worker_wire.hpp"

namespace tessera::detail {

namespace {

// A string field of an object, or `fallback` when it is missing or of
// another type (a malformed field is the worker's bug, not a reason to throw).
std::string string_field(const nlohmann::json& j, const char* key, const char* fallback) {
  const auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string(fallback);
}

}  // namespace

std::optional<std::string> take_line(std::string& buffer) {
  const auto nl = buffer.find('\n');
  if (nl == std::string::npos) return std::nullopt;
  std::string line = buffer.substr(0, nl);
  buffer.erase(0, nl + 1);
  return line;
}

WorkerLine classify_worker_line(std::string_view line, std::string_view answer_event) {
  WorkerLine out;
  auto ev = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (!ev.is_object()) return out;  // not ours (stdout is redirected in the worker), or garbage
  const std::string name = string_field(ev, "event", "");
  if (name == "heartbeat") {
    out.kind = WorkerLine::Kind::heartbeat;
    out.phase = string_field(ev, "phase", "");
  } else if (name == "fatal") {
    out.kind = WorkerLine::Kind::fatal;
    out.reason = string_field(ev, "reason", "worker failed");
  } else if (!name.empty() && name == answer_event) {
    out.kind = WorkerLine::Kind::answer;
  } else {
    out.kind = name.empty() ? WorkerLine::Kind::ignored : WorkerLine::Kind::other;
  }
  if (out.kind != WorkerLine::Kind::ignored) out.event = std::move(ev);
  return out;
}

}  // namespace tessera::detail
