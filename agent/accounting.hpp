#pragma once
// Token and cost accounting: a per-model price table, running totals, and a
// budget that the search can check and enforce. All of it is thread-safe.
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "agent/proposer.hpp"

namespace tessera::agent {

struct Price {
  double input_per_mtok = 0;   // USD per million prompt tokens
  double output_per_mtok = 0;  // USD per million completion tokens (reasoning included)
};

// Prices in USD per million tokens (agent/prices.json). A model matches its
// exact name, then the longest listed prefix ("gpt-4o-2024-08-06" -> "gpt-4o"),
// with any "vendor/" prefix removed first (OpenRouter style names).
class PriceTable {
public:
  PriceTable() = default;
  static PriceTable from_json(const nlohmann::json& j);  // throws bad_input
  static PriceTable load(const std::filesystem::path& path);
  // agent/prices.json from the source tree, or $TESSERA_PRICES when set.
  static const PriceTable& builtin();

  void set(const std::string& model, Price price) { prices_[model] = price; }
  std::optional<Price> find(const std::string& model) const;
  // Fills usage.cost_usd; returns false (cost 0) for an unknown model.
  bool price(const std::string& model, Usage& usage) const;

private:
  std::map<std::string, Price> prices_;
};

// Per-model and overall totals of what the endpoints reported.
struct UsageTotals {
  long long calls = 0;
  long long failed_calls = 0;
  long long cached_calls = 0;
  long long unpriced_calls = 0;  // model missing from the price table: cost counted as 0
  Usage usage;                   // sums; latency_ms is the summed latency
};
void to_json(nlohmann::json& j, const UsageTotals& t);

class Ledger {
public:
  void record(const std::string& model, const Usage& usage, bool ok, bool cached, bool priced);
  UsageTotals total() const;
  std::map<std::string, UsageTotals> by_model() const;
  nlohmann::json to_json() const;

private:
  mutable std::mutex mutex_;
  UsageTotals total_;
  std::map<std::string, UsageTotals> by_model_;
};

// A spending limit in tokens (prompt + completion) and/or USD. Zero = no limit.
class Budget {
public:
  Budget(long long max_tokens, double max_usd) : max_tokens_(max_tokens), max_usd_(max_usd) {}
  void charge(const Usage& usage);
  bool exhausted() const;
  // Why the budget is exhausted, or nullopt while there is some left.
  std::optional<std::string> exhausted_reason() const;
  long long tokens_spent() const;
  double usd_spent() const;

private:
  mutable std::mutex mutex_;
  long long max_tokens_;
  double max_usd_;
  long long tokens_ = 0;
  double usd_ = 0;
};

}  // namespace tessera::agent
