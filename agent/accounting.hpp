#pragma once
// Token and cost accounting: a per-model price table, running totals, and a
// budget that the search can check and enforce. All of it is thread-safe.
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

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

// An upper bound on the prompt tokens of a request: no tokenizer in use makes
// more than one token per byte of text, and a chat template adds a few tokens
// per message and per request.
inline constexpr long long kChatTemplateTokensPerMessage = 8;
inline constexpr long long kChatTemplateTokensPerRequest = 16;
long long max_prompt_tokens(const std::vector<ChatMessage>& messages);

// The worst a call can cost: every prompt token of the bound above, and every
// completion token the request allows (max_tokens), at the model's prices.
struct CallCost {
  long long prompt_tokens = 0;
  long long completion_tokens = 0;
  double usd = 0;
  long long tokens() const { return prompt_tokens + completion_tokens; }
};
CallCost worst_case_cost(long long prompt_tokens, long long max_completion_tokens, const std::optional<Price>& price);

class Budget;

// A call's worst case, held against a Budget while the call is in flight, so
// calls in flight together can never overspend. settle() charges what the
// call really cost; a reservation never settled (the call was abandoned) is
// released unchanged. Move-only.
class BudgetReservation {
public:
  BudgetReservation() = default;
  ~BudgetReservation() noexcept;
  BudgetReservation(BudgetReservation&& other) noexcept;
  BudgetReservation& operator=(BudgetReservation&& other) noexcept;
  BudgetReservation(const BudgetReservation&) = delete;
  BudgetReservation& operator=(const BudgetReservation&) = delete;

  bool held() const { return budget_ != nullptr; }
  const CallCost& reserved() const { return cost_; }
  // Releases the reservation and charges `tokens` and `usd`.
  void settle(long long tokens, double usd);

private:
  friend class Budget;
  BudgetReservation(Budget* budget, CallCost cost) : budget_(budget), cost_(cost) {}
  void release() noexcept;
  Budget* budget_ = nullptr;
  CallCost cost_;
};

// A spending limit in tokens (prompt + completion) and/or USD. Zero = no limit.
// Calls reserve their worst case before they are sent (reserve), so the spend
// never passes a limit as long as servers bill no more than they were allowed
// (max_tokens) and report what they bill.
class Budget {
public:
  Budget(long long max_tokens, double max_usd) : max_tokens_(max_tokens), max_usd_(max_usd) {}
  Budget(const Budget&) = delete;
  Budget& operator=(const Budget&) = delete;

  // Charges spending that went around reserve (a resumed run's past steps).
  void charge(const Usage& usage);
  // Holds `cost` when spent + reserved + cost stays within every limit; else
  // nullopt, with the reason in `why` and the limit ("tokens" or "usd") in `limit`.
  std::optional<BudgetReservation> reserve(const CallCost& cost, std::string& why, std::string& limit);
  bool exhausted() const;
  // Why the budget is exhausted, or nullopt while there is some left.
  std::optional<std::string> exhausted_reason() const;
  long long tokens_spent() const;
  double usd_spent() const;
  long long max_tokens() const { return max_tokens_; }
  double max_usd() const { return max_usd_; }
  bool limited() const { return max_tokens_ > 0 || max_usd_ > 0; }

private:
  friend class BudgetReservation;
  void finish(const CallCost& reserved, long long tokens, double usd) noexcept;

  mutable std::mutex mutex_;
  long long max_tokens_;
  double max_usd_;
  long long tokens_ = 0;
  double usd_ = 0;
  long long reserved_tokens_ = 0;
  double reserved_usd_ = 0;
};

}  // namespace tessera::agent
