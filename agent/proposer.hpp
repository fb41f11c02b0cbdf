#pragma once
// Proposers turn what the harness measured into the next candidate.
// One interface, several implementations (LlmProposer, TileProposer,
// ReplayProposer). Search loops and the environment use only this header.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/candidate.hpp"
#include "core/result.hpp"
#include "core/task.hpp"

namespace tessera::agent {

struct ChatMessage {
  std::string role;  // system | user | assistant
  std::string content;
};
void to_json(nlohmann::json& j, const ChatMessage& m);
void from_json(const nlohmann::json& j, ChatMessage& m);

struct Usage {
  long long prompt_tokens = 0;
  long long completion_tokens = 0;
  long long reasoning_tokens = 0;
  double cost_usd = 0;
  double latency_ms = 0;
};
void to_json(nlohmann::json& j, const Usage& u);
void from_json(const nlohmann::json& j, Usage& u);
// Token counts added, saturating at the type's bounds (usage read back from a
// log holds whatever fits the type, and reports sum many of them).
long long add_tokens(long long a, long long b);
// Prompt and completion tokens, through add_tokens.
long long total_tokens(const Usage& u);

// A kernel the proposer may build on, with what the harness said about it.
struct Evaluated {
  Candidate candidate;
  EvalResult result;
};

// A kernel evaluated on this task earlier in the run, as proposers that learn
// from measurements (the tile proposer's cost model) and skip what was tried
// need it: no source, no counters.
struct Measured {
  std::string name;
  nlohmann::json meta;  // the candidate's meta (meta["tile_config"] for a tile config)
  Status status = Status::ok;
  double cold_us = 0;   // the cold median when the kernel verified and was timed, else 0
};

struct GpuInfo {
  std::string name = "unknown";
  int sm_count = 0;
  int smem_per_block_optin = 0;  // bytes
  long long l2_bytes = 0;
  double peak_tflops = 0;  // measured
  std::string arch = "sm_90a";
  int sm_clock_mhz = 0;    // under load, as the device reports it
};
// What an evaluator reports about its GPU, as a prompt shows it; fields the
// device leaves unknown (compile-only mode) keep GpuInfo's defaults.
GpuInfo gpu_info(const DeviceSummary& device);

struct ProposalContext {
  Task task;
  std::optional<Evaluated> parent;           // none: start from scratch/seed
  std::vector<Evaluated> inspirations;       // other good kernels from the population
  std::vector<Evaluated> history;            // recent attempts, newest last
  std::vector<Measured> measured;            // every evaluation of this task in the run, oldest first
  std::string strategy;                      // optimisation strategy arm, e.g. "pipelining"
  std::string model;                         // model arm (for ensembles); empty = default
  double temperature = -1;                   // <0: endpoint default
  std::uint64_t seed = 0;
  // The search step this proposal is for; <0 outside a search. Proposers whose
  // output must not depend on call order (ReplayProposer) key on it, so a
  // resumed run is served what an uninterrupted one would have been.
  long long step = -1;
  // A re-ask after the previous answer repeated a kernel that was already
  // evaluated: the step that evaluated it (the prompt names it) and how many
  // times this step has been asked again. Proposers that sample vary their
  // sampling with `reask`.
  long long repeated_step = -1;
  int reask = 0;
  GpuInfo gpu;
};

// How a caller should treat a failed proposal.
enum class ProposalFailure {
  none,       // the proposal is ok
  transient,  // this attempt failed (an unusable reply, a network error after retries); the next may not
  permanent,  // no retry can fix it: a rejected key, an unknown model, a wrong URL (HTTP 401/403/404...)
  budget,     // the spending budget refused the call before it was sent
};
std::string to_string(ProposalFailure f);

struct Proposal {
  bool ok = false;
  std::string error;             // why no candidate (parse failure, endpoint error, budget)
  // Set with error; transient when a proposer leaves it at none on a failure.
  ProposalFailure failure = ProposalFailure::none;
  Candidate candidate;
  std::string action_kind;       // full_source | diff | tile_config | replay
  std::string action;            // the diff, the full source, or the config JSON
  std::string proposer;          // "llm", "tile", "replay"
  nlohmann::json proposer_info = nlohmann::json::object();  // model, strategy, temperature, seed...
  std::vector<ChatMessage> messages;  // sent and received, for trajectories
  Usage usage;
};
void to_json(nlohmann::json& j, const Proposal& p);

class Proposer {
public:
  virtual ~Proposer() = default;
  virtual std::string name() const = 0;
  // Never throws for model/network/parse failures: those come back as !ok.
  virtual Proposal propose(const ProposalContext& context) = 0;
};

}  // namespace tessera::agent
