#pragma once
// LlmProposer: prompt (PromptBuilder) -> chat (an Ensemble member) -> parse
// (diff or full source) -> Candidate. Every model, network or parse failure is
// a Proposal with ok == false and a one-line error; nothing is thrown.
#include <filesystem>
#include <memory>
#include <optional>
#include <vector>

#include "agent/accounting.hpp"
#include "agent/cache.hpp"
#include "agent/ensemble.hpp"
#include "agent/prompt.hpp"
#include "agent/proposer.hpp"

namespace tessera::agent {

// A step asked again because its answer repeated an evaluated kernel is sent
// warmer each time, from the context's temperature (else the endpoint's, else
// kAssumedServerTemperature, a typical server default), up to the cap.
inline constexpr double kReaskTemperatureStep = 0.15;
inline constexpr double kMaxReaskTemperature = 1.2;
inline constexpr double kAssumedServerTemperature = 0.8;
double reask_temperature(double base, int reask);

struct LlmProposerOptions {
  std::vector<EndpointConfig> endpoints;  // the ensemble; at least one
  PromptOptions prompt;
  CacheMode cache_mode = CacheMode::off;
  std::filesystem::path cache_dir;   // empty: ResponseCache::default_dir()
  std::shared_ptr<Budget> budget;    // shared with the search; null: unlimited
  std::shared_ptr<Ledger> ledger;    // null: the proposer keeps its own
  const CancelToken* cancel = nullptr;
  ClientOptions client;              // clock, prices, jitter seed (cache/ledger/budget come from above)
};

// Throws bad_input for configuration mistakes (no endpoint, missing templates).
std::unique_ptr<Proposer> make_llm_proposer(LlmProposerOptions options);
// With clients built elsewhere (tests, or a search sharing one ensemble).
std::unique_ptr<Proposer> make_llm_proposer(std::shared_ptr<Ensemble> ensemble, PromptOptions prompt,
                                            const CancelToken* cancel = nullptr);

// endpoint_from_env() plus TESSERA_LLM_CACHE (off | read_write | replay) and
// TESSERA_LLM_CACHE_DIR. nullopt when the endpoint variables are not set.
std::optional<LlmProposerOptions> llm_proposer_options_from_env();
// The endpoints (from a file, an ensemble) with the cache settings of the environment.
LlmProposerOptions llm_proposer_options(std::vector<EndpointConfig> endpoints);

// What a run keeps to build the same proposer again (a resumed search): the
// endpoints (to_json: never a key) and the cache settings. Reading it back
// warns about extra headers that were not kept because they may hold secrets.
nlohmann::json llm_options_record(const LlmProposerOptions& options);
LlmProposerOptions llm_options_from_record(const nlohmann::json& record);  // throws bad_input

}  // namespace tessera::agent
