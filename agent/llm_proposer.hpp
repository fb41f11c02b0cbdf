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

}  // namespace tessera::agent
