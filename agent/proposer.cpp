#include "agent/proposer.hpp"

#include <limits>
#include "core/json_read.hpp"

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
  g.sm_clock_mhz = d.sm_clock_mhz;
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
  // Through integer_value: a float out of range (a run log's usage, or an
  // endpoint's) is bad input, not a cast with undefined behaviour.
  u.prompt_tokens = integer_value<long long>(j, "prompt_tokens", 0);
  u.completion_tokens = integer_value<long long>(j, "completion_tokens", 0);
  u.reasoning_tokens = integer_value<long long>(j, "reasoning_tokens", 0);
  u.cost_usd = j.value("cost_usd", 0.0);
  u.latency_ms = j.value("latency_ms", 0.0);
}

long long add_tokens(long long a, long long b) {
  long long sum = 0;
  if (__builtin_add_overflow(a, b, &sum))
    return a > 0 ? std::numeric_limits<long long>::max() : std::numeric_limits<long long>::min();
  return sum;
}

long long total_tokens(const Usage& u) { return add_tokens(u.prompt_tokens, u.completion_tokens); }

std::string to_string(ProposalFailure f) {
  switch (f) {
    case ProposalFailure::none: return "none";
    case ProposalFailure::transient: return "transient";
    case ProposalFailure::permanent: return "permanent";
    case ProposalFailure::budget: return "budget";
  }
  return "unknown";
}

void to_json(nlohmann::json& j, const Proposal& p) {
  j = {{"ok", p.ok},
       {"error", p.error},
       {"failure", to_string(p.failure)},
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
