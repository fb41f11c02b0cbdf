#include "agent/llm_proposer.hpp"

#include <cstdlib>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "agent/parse.hpp"
#include "harness/core/error.hpp"
#include "harness/core/hash.hpp"

namespace tessera::agent {

namespace {

class LlmProposer final : public Proposer {
public:
  LlmProposer(std::shared_ptr<Ensemble> ensemble, PromptOptions prompt, const CancelToken* cancel)
      : ensemble_(std::move(ensemble)), builder_(std::move(prompt)), cancel_(cancel) {
    if (!ensemble_ || ensemble_->size() == 0) fail_bad_input("the LLM proposer needs at least one endpoint");
  }

  std::string name() const override { return "llm"; }

  Proposal propose(const ProposalContext& context) override {
    Proposal p;
    p.proposer = "llm";
    p.proposer_info = {{"strategy", context.strategy}, {"seed", context.seed}, {"temperature", context.temperature}};
    try {
      run(context, p);
    } catch (const std::exception& e) {
      // Bad strategy names, template errors: still data for the caller.
      p.ok = false;
      p.error = e.what();
    }
    return p;
  }

private:
  void run(const ProposalContext& context, Proposal& p) {
    LlmClient& client = ensemble_->pick(context.model, context.seed);
    p.proposer_info["endpoint"] = client.config().label();
    p.proposer_info["model"] = client.config().model;
    p.messages = builder_.build(context);

    ChatRequest request;
    request.messages = p.messages;
    if (context.temperature >= 0) request.temperature = context.temperature;
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
      p.proposer_info["error_kind"] = to_string(reply.error_kind);
      return;
    }
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

  std::shared_ptr<Ensemble> ensemble_;
  PromptBuilder builder_;
  const CancelToken* cancel_;
};

}  // namespace

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

std::optional<LlmProposerOptions> llm_proposer_options_from_env() {
  auto endpoint = endpoint_from_env();
  if (!endpoint) return std::nullopt;
  LlmProposerOptions o;
  o.endpoints.push_back(std::move(*endpoint));
  if (const char* mode = std::getenv("TESSERA_LLM_CACHE"); mode != nullptr && *mode != '\0') o.cache_mode = parse_cache_mode(mode);
  if (const char* dir = std::getenv("TESSERA_LLM_CACHE_DIR"); dir != nullptr && *dir != '\0') o.cache_dir = dir;
  return o;
}

}  // namespace tessera::agent
