// tessera agent ping | strategies: check an LLM endpoint, list the strategy arms.
#include <cstdio>
#include <memory>

#include <fmt/format.h>

#include "agent/client.hpp"
#include "agent/prompt.hpp"
#include "agent/strategies.hpp"
#include "cli/command.hpp"
#include "cli/task_args.hpp"
#include "harness/candidate.hpp"
#include "harness/core/error.hpp"
#include "harness/core/fs.hpp"

namespace tessera::cli {

namespace {

constexpr double kPingTimeoutS = 60.0;
constexpr int kPingMaxTokens = 64;
constexpr int kPingAttempts = 2;

struct PingArgs {
  std::string base_url, model, api_key_env = agent::kDefaultApiKeyEnv, provider = "openai", config_file;
  std::string prompt = "Reply with one short sentence: which model are you?";
  bool stream = false;
  double timeout_s = kPingTimeoutS;
};

agent::EndpointConfig ping_endpoint(const PingArgs& a, bool api_key_env_given) {
  agent::EndpointConfig c;
  if (!a.config_file.empty()) {
    c = agent::load_endpoint_configs(a.config_file).front();
  } else {
    if (a.base_url.empty() || a.model.empty()) fail_bad_input("agent ping needs --base-url and --model (or --config FILE)");
    c.base_url = a.base_url;
    c.model = a.model;
    c.provider = agent::parse_provider(a.provider);
    if (c.provider == agent::Provider::anthropic) c.api_key_env = "ANTHROPIC_API_KEY";
  }
  if (api_key_env_given) c.api_key_env = a.api_key_env;
  if (a.stream) c.stream = true;
  c.max_tokens = kPingMaxTokens;
  c.total_timeout_s = a.timeout_s;
  c.connect_timeout_s = std::min(c.connect_timeout_s, a.timeout_s);
  c.retry.max_attempts = kPingAttempts;
  return c;
}

void run_ping(const PingArgs& a, bool api_key_env_given) {
  const agent::EndpointConfig config = ping_endpoint(a, api_key_env_given);
  auto client = agent::make_client(config);
  agent::ChatRequest request;
  request.messages = {{"user", a.prompt}};
  const agent::ChatResult r = client->chat(request);
  if (!r.ok) {
    std::fprintf(stderr, "error: ping %s (%s) failed [%s]: %s\n", config.base_url.c_str(), config.model.c_str(),
                 agent::to_string(r.error_kind).c_str(), r.error.c_str());
    set_exit_code(1);
    return;
  }
  fmt::print("endpoint:   {} ({})\n", config.base_url, agent::to_string(config.provider));
  fmt::print("model:      {}\n", r.model);
  fmt::print("latency:    {:.0f} ms ({} attempt{})\n", r.usage.latency_ms, r.attempts, r.attempts == 1 ? "" : "s");
  fmt::print("tokens:     {} prompt, {} completion, {} reasoning\n", r.usage.prompt_tokens, r.usage.completion_tokens,
             r.usage.reasoning_tokens);
  fmt::print("cost:       {}\n", r.priced ? fmt::format("${:.6f}", r.usage.cost_usd) : std::string("unknown (model not in the price table)"));
  fmt::print("finish:     {}\n", r.finish_reason.empty() ? "-" : r.finish_reason);
  if (!r.reasoning.empty()) fmt::print("reasoning:  {} characters\n", r.reasoning.size());
  fmt::print("reply:      {}\n", r.content);
}

void list_strategies() {
  fmt::print("{:<20} {:<16} {}\n", "strategy", "target resource", "focus");
  for (const auto& s : agent::strategies()) fmt::print("{:<20} {:<16} {}\n", s.name, s.target_resource, s.summary);
}

struct PromptArgs {
  TaskArgs task;
  std::string kernel_file, result_file, strategy;
  std::size_t max_prompt_tokens = agent::kDefaultMaxPromptTokens;
};

// Renders the prompt the LLM proposer would send, without sending it.
void show_prompt(const PromptArgs& a) {
  agent::ProposalContext c;
  c.task = resolve_task(a.task);
  c.strategy = a.strategy;
  if (!a.kernel_file.empty()) {
    agent::Evaluated parent;
    parent.candidate = load_candidate(a.kernel_file);
    if (!a.result_file.empty()) {
      try {
        parent.result = nlohmann::json::parse(read_file(a.result_file)).get<EvalResult>();
      } catch (const nlohmann::json::exception& e) {
        fail_bad_input(fmt::format("{}: not an evaluation result JSON: {}", a.result_file, e.what()));
      }
    } else {
      parent.result.status = Status::compiled;
      parent.result.reason = "not measured: no --result given";
    }
    c.parent = std::move(parent);
  } else if (!a.result_file.empty()) {
    fail_bad_input("--result needs --kernel (the result describes that kernel)");
  }
  agent::PromptOptions o;
  o.max_prompt_tokens = a.max_prompt_tokens;
  const auto messages = agent::PromptBuilder(o).build(c);
  std::size_t tokens = 0;
  for (const auto& m : messages) {
    fmt::print("===== {} (~{} tokens) =====\n{}\n", m.role, agent::approx_tokens(m.content), m.content);
    tokens += agent::approx_tokens(m.content);
  }
  fmt::print("===== total ~{} tokens (budget {}) =====\n", tokens, a.max_prompt_tokens);
}

void setup(CLI::App& root) {
  auto* agent_cmd = root.add_subcommand("agent", "LLM endpoints and strategy arms (docs/agent.md)");
  agent_cmd->require_subcommand(1);

  auto args = std::make_shared<PingArgs>();
  auto* ping = agent_cmd->add_subcommand("ping", "send a tiny chat request and print model, latency, tokens and the reply");
  ping->add_option("--base-url", args->base_url, "API root, e.g. https://api.openai.com/v1 or http://127.0.0.1:8000/v1");
  ping->add_option("--model", args->model, "model name as the server knows it");
  auto* key_opt = ping->add_option("--api-key-env", args->api_key_env, "environment variable holding the API key")
                      ->capture_default_str();
  ping->add_option("--provider", args->provider, "openai (Chat Completions) or anthropic (Messages)")
      ->check(CLI::IsMember({"openai", "anthropic"}))
      ->capture_default_str();
  ping->add_option("--config", args->config_file, "endpoint JSON file (its first endpoint) instead of --base-url/--model");
  ping->add_option("--prompt", args->prompt, "the message to send");
  ping->add_flag("--stream", args->stream, "use server-sent events");
  ping->add_option("--timeout", args->timeout_s, "seconds per attempt")->check(CLI::PositiveNumber)->capture_default_str();
  ping->callback([args, key_opt] { run_ping(*args, key_opt->count() > 0); });

  auto pargs = std::make_shared<PromptArgs>();
  auto* prompt = agent_cmd->add_subcommand("prompt", "print the prompt the LLM proposer would send (nothing is sent)");
  add_task_options(prompt, pargs->task);
  prompt->add_option("--kernel", pargs->kernel_file, "the current kernel (.cu); none: a from-scratch prompt")->check(CLI::ExistingFile);
  prompt->add_option("--result", pargs->result_file, "its evaluation result JSON (tessera eval --json)")->check(CLI::ExistingFile);
  prompt->add_option("--strategy", pargs->strategy, "strategy arm (tessera agent strategies)");
  prompt->add_option("--max-prompt-tokens", pargs->max_prompt_tokens, "token budget for the prompt")->capture_default_str();
  prompt->callback([pargs] { show_prompt(*pargs); });

  auto* strat = agent_cmd->add_subcommand("strategies", "list the optimisation strategies (the bandit's arms)");
  strat->callback([] { list_strategies(); });
}

}  // namespace

TESSERA_COMMAND(70, setup);

}  // namespace tessera::cli
