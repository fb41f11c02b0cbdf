#pragma once
// The HTTP LLM client: cache -> budget -> (rate limit, concurrency slot,
// POST, classify) with retries -> accounting. See docs/agent.md for the policy.
#include <cstdint>
#include <memory>

#include "agent/accounting.hpp"
#include "agent/cache.hpp"
#include "agent/endpoint.hpp"

namespace tessera::agent {

struct ClientOptions {
  std::shared_ptr<ResponseCache> cache;  // null: no cache
  std::shared_ptr<Ledger> ledger;        // null: no totals kept
  std::shared_ptr<Budget> budget;        // null: unlimited
  const PriceTable* prices = nullptr;    // null: PriceTable::builtin()
  Clock* clock = nullptr;                // null: system_clock(); tests inject a fake
  std::uint64_t jitter_seed = 0;         // 0: seeded from the clock
};

std::unique_ptr<LlmClient> make_client(EndpointConfig config, ClientOptions options = {});

}  // namespace tessera::agent
