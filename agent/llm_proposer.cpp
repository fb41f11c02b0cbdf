#include "agent/llm_proposer.hpp"

#include <algorithm>
#include <cstdlib>
#include <map>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "agent/parse.hpp"
#include "core/error.hpp"
#include "core/hash.hpp"

namespace tessera::agent {

namespace {

std::size_t chars_of(const std::vector<ChatMessage>& messages) {
  std::size_t n = 0;
  for (const auto& m : messages) n += m.content.size();
  return n;
}

// What a caller should make of a failed call.
ProposalFailure failure_of(ChatErrorKind kind) {
  if (kind == ChatErrorKind::budget) return ProposalFailure::budget;
  return is_permanent(kind) ? ProposalFailure::permanent : ProposalFailure::transient;
}

class LlmProposer final : public Proposer {
public:
  LlmProposer(std::shared_ptr<Ensemble> ensemble, PromptOptions prompt, const CancelToken* cancel)
      : ensemble_(std::move(ensemble)), builder_(std::move(prompt)), cancel_(cancel) {
    if (!ensemble_ || ensemble_->size() == 0) fail_bad_input("the LLM proposer needs at least one endpoint");
    for (const auto& name : ensemble_->names())
      ratios_.emplace(name, std::make_unique<TokenRatio>(builder_.options().chars_per_token));
  }

  std::string name() const override { return "llm"; }

  Proposal propose(const ProposalContext& context) override {
    Proposal p;
    p.proposer = "llm";
    p.proposer_info = {{"strategy", context.strategy}, {"seed", context.seed}, {"temperature", context.temperature}};
    try {
      run(context, p);
    } catch (const Error& e) {
      // Bad strategy or model names, template errors: still data for the
      // caller, and a configuration mistake that no retry fixes.
      p.ok = false;
      p.error = e.what();
      p.failure = e.kind() == Error::Kind::bad_input ? ProposalFailure::permanent : ProposalFailure::transient;
    } catch (const std::exception& e) {
      p.ok = false;
      p.error = e.what();
      p.failure = ProposalFailure::transient;
    }
    if (!p.ok && p.failure == ProposalFailure::none) p.failure = ProposalFailure::transient;
    if (!p.ok) p.proposer_info["failure"] = to_string(p.failure);
    return p;
  }

private:
  void run(const ProposalContext& context, Proposal& p) {
    LlmClient& client = ensemble_->pick(context.model, context.seed);
    TokenRatio& ratio = *ratios_.at(client.config().label());
    p.proposer_info["endpoint"] = client.config().label();
    p.proposer_info["model"] = client.config().model;
    const double chars_per_token = ratio.chars_per_token();
    p.proposer_info["chars_per_token"] = chars_per_token;
    p.messages = builder_.build(context, chars_per_token);

    ChatRequest request;
    request.messages = p.messages;
    if (context.reask > 0) {
      request.temperature = reask_temperature(base_temperature(context, client.config()), context.reask);
      p.proposer_info["temperature"] = *request.temperature;
      p.proposer_info["reask"] = context.reask;
    } else if (context.temperature >= 0) {
      request.temperature = context.temperature;
    }
    request.seed = context.seed;
    request.sample_index = context.seed;
    const ChatResult reply = client.chat(request, cancel_);
    p.usage = reply.usage;
    p.proposer_info["attempts"] = reply.attempts;
    p.proposer_info["from_cache"] = reply.from_cache;
    p.proposer_info["priced"] = reply.priced;
    if (!reply.model.empty()) p.proposer_info["model"] = reply.model;
    if (!reply.ok) {
      p.error = fmt::format("LLM call failed ({}): {}", to_string(reply.error_kind), reply.error);
      p.failure = failure_of(reply.error_kind);
      p.proposer_info["error_kind"] = to_string(reply.error_kind);
      if (!reply.budget_limit.empty()) p.proposer_info["budget_limit"] = reply.budget_limit;
      return;
    }
    if (!reply.from_cache) ratio.observe(chars_of(p.messages), reply.usage.prompt_tokens);
    p.proposer_info["finish_reason"] = reply.finish_reason;
    if (!reply.reasoning.empty()) p.proposer_info["reasoning"] = reply.reasoning;
    p.messages.push_back({"assistant", reply.content});

    const std::optional<std::string> parent =
        context.parent ? std::optional<std::string>(context.parent->candidate.source) : std::nullopt;
    const ParsedAction action = parse_kernel_reply(reply.content, parent);
    if (!action.ok) {
      p.error = "could not use the reply: " + action.error;
      return;
    }
    p.action_kind = action.kind;
    p.action = action.action;
    p.candidate.source = action.source;
    try {
      p.candidate.kind = detect_kind(action.source);
    } catch (const Error& e) {
      p.error = std::string("the proposed kernel breaks the ABI: ") + e.what();
      return;
    }
    const std::string strategy = context.strategy.empty() ? "free" : context.strategy;
    p.candidate.name = fmt::format("llm_{}_{}", strategy, content_hash(action.source).substr(0, 10));
    p.candidate.meta = {{"proposer", "llm"}, {"action_kind", action.kind}, {"model", p.proposer_info["model"]}};
    if (context.parent) p.candidate.meta["parent"] = context.parent->candidate.name;
    p.ok = true;
  }

  static double base_temperature(const ProposalContext& context, const EndpointConfig& endpoint) {
    if (context.temperature >= 0) return context.temperature;
    return endpoint.temperature.value_or(kAssumedServerTemperature);
  }

  std::shared_ptr<Ensemble> ensemble_;
  PromptBuilder builder_;
  const CancelToken* cancel_;
  std::map<std::string, std::unique_ptr<TokenRatio>> ratios_;  // per endpoint: tokenizers differ
};

}  // namespace

double reask_temperature(double base, int reask) {
  if (reask <= 0 || base >= kMaxReaskTemperature) return base;  // never cooler than asked
  return std::min(kMaxReaskTemperature, base + kReaskTemperatureStep * reask);
}

std::unique_ptr<Proposer> make_llm_proposer(std::shared_ptr<Ensemble> ensemble, PromptOptions prompt, const CancelToken* cancel) {
  return std::make_unique<LlmProposer>(std::move(ensemble), std::move(prompt), cancel);
}

std::unique_ptr<Proposer> make_llm_proposer(LlmProposerOptions options) {
  ClientOptions client = options.client;
  if (options.cache_mode != CacheMode::off)
    client.cache = std::make_shared<ResponseCache>(
        options.cache_dir.empty() ? ResponseCache::default_dir() : options.cache_dir, options.cache_mode);
  client.budget = options.budget;
  client.ledger = options.ledger ? options.ledger : std::make_shared<Ledger>();
  return make_llm_proposer(Ensemble::from_configs(options.endpoints, client), std::move(options.prompt), options.cancel);
}

LlmProposerOptions llm_proposer_options(std::vector<EndpointConfig> endpoints) {
  LlmProposerOptions o;
  o.endpoints = std::move(endpoints);
  if (const char* mode = std::getenv("TESSERA_LLM_CACHE"); mode != nullptr && *mode != '\0') o.cache_mode = parse_cache_mode(mode);
  if (const char* dir = std::getenv("TESSERA_LLM_CACHE_DIR"); dir != nullptr && *dir != '\0') o.cache_dir = dir;
  return o;
}

std::optional<LlmProposerOptions> llm_proposer_options_from_env() {
  auto endpoint = endpoint_from_env();
  if (!endpoint) return std::nullopt;
  return llm_proposer_options({std::move(*endpoint)});
}

nlohmann::json llm_options_record(const LlmProposerOptions& options) {
  nlohmann::json endpoints = nlohmann::json::array();
  for (const auto& e : options.endpoints) endpoints.push_back(to_json(e));
  return {{"endpoints", endpoints}, {"cache", to_string(options.cache_mode)}, {"cache_dir", options.cache_dir.string()}};
}

LlmProposerOptions llm_options_from_record(const nlohmann::json& record) {
  if (!record.is_object() || !record.contains("endpoints") || !record["endpoints"].is_array() ||
      record["endpoints"].empty())
    fail_bad_input("the run's LLM record has no endpoints");
  LlmProposerOptions o;
  for (const auto& e : record["endpoints"]) {
    std::vector<std::string> redacted;
    o.endpoints.push_back(endpoint_from_record(e, &redacted));
    if (!redacted.empty())
      spdlog::warn("endpoint '{}': the headers {} were not saved with the run (they may hold secrets) and are not sent; "
                   "give the endpoint file again with --config to send them",
                   o.endpoints.back().label(), fmt::join(redacted, ", "));
  }
  o.cache_mode = parse_cache_mode(record.value("cache", std::string("off")));
  o.cache_dir = record.value("cache_dir", std::string());
  return o;
}

}  // namespace tessera::agent
