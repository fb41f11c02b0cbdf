#include "agent/accounting.hpp"

#include <cstdlib>
#include <utility>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/fs.hpp"

#ifndef TESSERA_PROMPT_DIR_DEFAULT
#define TESSERA_PROMPT_DIR_DEFAULT "agent/prompts"
#endif

namespace tessera::agent {

PriceTable PriceTable::from_json(const nlohmann::json& j) {
  if (!j.is_object() || !j.contains("models") || !j["models"].is_object())
    fail_bad_input("price table: expected {\"models\": {\"<model>\": {\"input_per_mtok\": x, \"output_per_mtok\": y}}}");
  PriceTable t;
  for (const auto& [model, p] : j["models"].items()) {
    if (!p.is_object() || !p.contains("input_per_mtok") || !p.contains("output_per_mtok") ||
        !p["input_per_mtok"].is_number() || !p["output_per_mtok"].is_number())
      fail_bad_input(fmt::format("price table: model '{}' needs numeric input_per_mtok and output_per_mtok", model));
    t.set(model, Price{p["input_per_mtok"].get<double>(), p["output_per_mtok"].get<double>()});
  }
  return t;
}

PriceTable PriceTable::load(const std::filesystem::path& path) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(read_file(path));
  } catch (const nlohmann::json::exception& e) {
    fail_bad_input(fmt::format("price table {}: invalid JSON: {}", path.string(), e.what()));
  }
  return from_json(j);
}

const PriceTable& PriceTable::builtin() {
  static const PriceTable table = [] {
    const char* env = std::getenv("TESSERA_PRICES");
    std::filesystem::path path = env != nullptr && *env != '\0'
                                     ? std::filesystem::path(env)
                                     : std::filesystem::path(TESSERA_PROMPT_DIR_DEFAULT).parent_path() / "prices.json";
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) return PriceTable();  // every model unpriced, flagged per call
    return load(path);
  }();
  return table;
}

std::optional<Price> PriceTable::find(const std::string& model) const {
  std::string name = model;
  if (auto it = prices_.find(name); it != prices_.end()) return it->second;
  if (auto slash = name.rfind('/'); slash != std::string::npos) name = name.substr(slash + 1);
  if (auto it = prices_.find(name); it != prices_.end()) return it->second;
  std::optional<Price> best;
  size_t best_len = 0;
  for (const auto& [key, price] : prices_) {
    if (key.size() > best_len && name.compare(0, key.size(), key) == 0) {
      best = price;
      best_len = key.size();
    }
  }
  return best;
}

bool PriceTable::price(const std::string& model, Usage& usage) const {
  const auto p = find(model);
  if (!p) {
    usage.cost_usd = 0;
    return false;
  }
  // Reasoning tokens are already part of completion_tokens for both providers.
  usage.cost_usd = (double(usage.prompt_tokens) * p->input_per_mtok +
                    double(usage.completion_tokens) * p->output_per_mtok) / 1e6;
  return true;
}

void to_json(nlohmann::json& j, const UsageTotals& t) {
  j = {{"calls", t.calls},
       {"failed_calls", t.failed_calls},
       {"cached_calls", t.cached_calls},
       {"unpriced_calls", t.unpriced_calls},
       {"usage", t.usage}};
}

namespace {
void add(UsageTotals& t, const Usage& u, bool ok, bool cached, bool priced) {
  ++t.calls;
  if (!ok) ++t.failed_calls;
  if (cached) ++t.cached_calls;
  if (!priced) ++t.unpriced_calls;
  t.usage.prompt_tokens += u.prompt_tokens;
  t.usage.completion_tokens += u.completion_tokens;
  t.usage.reasoning_tokens += u.reasoning_tokens;
  t.usage.cost_usd += u.cost_usd;
  t.usage.latency_ms += u.latency_ms;
}
}  // namespace

void Ledger::record(const std::string& model, const Usage& usage, bool ok, bool cached, bool priced) {
  std::lock_guard lock(mutex_);
  add(total_, usage, ok, cached, priced);
  add(by_model_[model], usage, ok, cached, priced);
}

UsageTotals Ledger::total() const {
  std::lock_guard lock(mutex_);
  return total_;
}

std::map<std::string, UsageTotals> Ledger::by_model() const {
  std::lock_guard lock(mutex_);
  return by_model_;
}

nlohmann::json Ledger::to_json() const {
  std::lock_guard lock(mutex_);
  nlohmann::json j;
  j["total"] = total_;
  j["by_model"] = nlohmann::json::object();
  for (const auto& [m, t] : by_model_) j["by_model"][m] = t;
  return j;
}

long long max_prompt_tokens(const std::vector<ChatMessage>& messages) {
  long long n = kChatTemplateTokensPerRequest;
  for (const auto& m : messages) n += (long long)(m.content.size() + m.role.size()) + kChatTemplateTokensPerMessage;
  return n;
}

CallCost worst_case_cost(long long prompt_tokens, long long max_completion_tokens, const std::optional<Price>& price) {
  CallCost c;
  c.prompt_tokens = prompt_tokens;
  c.completion_tokens = max_completion_tokens;
  if (price)
    c.usd = (double(prompt_tokens) * price->input_per_mtok + double(max_completion_tokens) * price->output_per_mtok) / 1e6;
  return c;
}

BudgetReservation::~BudgetReservation() noexcept { release(); }

BudgetReservation::BudgetReservation(BudgetReservation&& other) noexcept
    : budget_(std::exchange(other.budget_, nullptr)), cost_(other.cost_) {}

BudgetReservation& BudgetReservation::operator=(BudgetReservation&& other) noexcept {
  if (this != &other) {
    release();
    budget_ = std::exchange(other.budget_, nullptr);
    cost_ = other.cost_;
  }
  return *this;
}

void BudgetReservation::settle(long long tokens, double usd) {
  if (budget_ == nullptr) return;
  budget_->finish(cost_, tokens, usd);
  budget_ = nullptr;
}

void BudgetReservation::release() noexcept {
  if (budget_ == nullptr) return;
  budget_->finish(cost_, 0, 0);
  budget_ = nullptr;
}

void Budget::charge(const Usage& usage) {
  std::lock_guard lock(mutex_);
  tokens_ += usage.prompt_tokens + usage.completion_tokens;
  usd_ += usage.cost_usd;
}

std::optional<BudgetReservation> Budget::reserve(const CallCost& cost, std::string& why, std::string& limit) {
  std::lock_guard lock(mutex_);
  if (max_tokens_ > 0 && tokens_ + reserved_tokens_ + cost.tokens() > max_tokens_) {
    limit = "tokens";
    why = fmt::format("token budget: this call may use up to {} tokens ({} prompt + {} completion), and {} of {} are "
                      "spent and {} held by calls in flight",
                      cost.tokens(), cost.prompt_tokens, cost.completion_tokens, tokens_, max_tokens_, reserved_tokens_);
    return std::nullopt;
  }
  if (max_usd_ > 0 && usd_ + reserved_usd_ + cost.usd > max_usd_) {
    limit = "usd";
    why = fmt::format("cost budget: this call may cost up to ${:.4f} ({} prompt + {} completion tokens), and ${:.4f} of "
                      "${:.4f} is spent and ${:.4f} held by calls in flight",
                      cost.usd, cost.prompt_tokens, cost.completion_tokens, usd_, max_usd_, reserved_usd_);
    return std::nullopt;
  }
  reserved_tokens_ += cost.tokens();
  reserved_usd_ += cost.usd;
  return BudgetReservation(this, cost);
}

void Budget::finish(const CallCost& reserved, long long tokens, double usd) noexcept {
  std::lock_guard lock(mutex_);
  reserved_tokens_ -= reserved.tokens();
  reserved_usd_ -= reserved.usd;
  tokens_ += tokens;
  usd_ += usd;
}

bool Budget::exhausted() const { return exhausted_reason().has_value(); }

std::optional<std::string> Budget::exhausted_reason() const {
  std::lock_guard lock(mutex_);
  if (max_tokens_ > 0 && tokens_ >= max_tokens_)
    return fmt::format("token budget exhausted: {} of {} tokens spent", tokens_, max_tokens_);
  if (max_usd_ > 0 && usd_ >= max_usd_)
    return fmt::format("cost budget exhausted: ${:.4f} of ${:.4f} spent", usd_, max_usd_);
  return std::nullopt;
}

long long Budget::tokens_spent() const {
  std::lock_guard lock(mutex_);
  return tokens_;
}

double Budget::usd_spent() const {
  std::lock_guard lock(mutex_);
  return usd_;
}

}  // namespace tessera::agent
