#include "serve/detail/record.hpp"

namespace tessera::serve::detail {

std::string EvalRecord::status() const {
  if (failed()) return error_type;
  if (!result) return "format_error";
  return to_string(result->status);
}

nlohmann::json EvalRecord::to_json() const {
  if (failed()) return {{"error", {{"type", error_type}, {"message", error_message}}}};
  nlohmann::json j = {
      {"status", status()},
      {"masked", reward.masked},
      {"reward", reward.scalar ? nlohmann::json(*reward.scalar) : nlohmann::json(nullptr)},
      {"reward_components", reward.components},
      {"action_kind", action_kind.empty() ? nlohmann::json(nullptr) : nlohmann::json(action_kind)},
      {"attempts", attempts},
      {"latency_ms", {{"queue", queue_ms}, {"compile_ahead", compile_ahead_ms}, {"total", total_ms}}},
      {"result", result ? nlohmann::json(*result) : nlohmann::json(nullptr)},
  };
  if (!format_error.empty()) j["format_error"] = format_error;
  return j;
}

}  // namespace tessera::serve::detail
