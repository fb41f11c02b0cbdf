#include "serve/detail/record.hpp"

namespace tessera::serve::detail {

std::string EvalRecord::status() const { return failed() || !verdict ? error_type : verdict->status(); }

nlohmann::json EvalRecord::to_json() const {
  if (failed() || !verdict) return {{"error", {{"type", error_type}, {"message", error_message}}}};
  nlohmann::json j = verdict->record();
  j["latency_ms"] = {{"queue", queue_ms}, {"compile_ahead", compile_ahead_ms}, {"total", total_ms}};
  return j;
}

}  // namespace tessera::serve::detail
