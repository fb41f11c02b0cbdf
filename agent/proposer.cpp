#include "agent/proposer.hpp"

namespace tessera::agent {

void to_json(nlohmann::json& j, const ChatMessage& m) { j = {{"role", m.role}, {"content", m.content}}; }
void from_json(const nlohmann::json& j, ChatMessage& m) {
  m.role = j.at("role").get<std::string>();
  m.content = j.at("content").get<std::string>();
}

GpuInfo gpu_info(const DeviceSummary& d) {
  GpuInfo g;
  if (!d.name.empty()) g.name = d.name;
  g.sm_count = d.sm_count;
  g.smem_per_block_optin = d.smem_per_block_optin;
  g.l2_bytes = d.l2_bytes;
  g.peak_tflops = d.peak_tflops;
  if (!d.arch.empty()) g.arch = d.arch;
  return g;
}

void to_json(nlohmann::json& j, const Usage& u) {
  j = {{"prompt_tokens", u.prompt_tokens},
       {"completion_tokens", u.completion_tokens},
       {"reasoning_tokens", u.reasoning_tokens},
       {"cost_usd", u.cost_usd},
       {"latency_ms", u.latency_ms}};
}
void from_json(const nlohmann::json& j, Usage& u) {
  u.prompt_tokens = j.value("prompt_tokens", 0LL);
  u.completion_tokens = j.value("completion_tokens", 0LL);
  u.reasoning_tokens = j.value("reasoning_tokens", 0LL);
  u.cost_usd = j.value("cost_usd", 0.0);
  u.latency_ms = j.value("latency_ms", 0.0);
}

void to_json(nlohmann::json& j, const Proposal& p) {
  j = {{"ok", p.ok},
       {"error", p.error},
       {"candidate_kind", to_string(p.candidate.kind)},
       {"candidate_name", p.candidate.name},
       {"action_kind", p.action_kind},
       {"action", p.action},
       {"proposer", p.proposer},
       {"proposer_info", p.proposer_info},
       {"messages", p.messages},
       {"usage", p.usage}};
}

}  // namespace tessera::agent
