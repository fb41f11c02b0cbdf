// tessera agent ping | strategies: check an LLM endpoint, list the strategy arms.
#include <cstdio>
#include <memory>

#include <fmt/format.h>

#include "agent/client.hpp"
#include "agent/strategies.hpp"
#include "cli/command.hpp"
#include "harness/core/error.hpp"

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

  auto* strat = agent_cmd->add_subcommand("strategies", "list the optimisation strategies (the bandit's arms)");
  strat->callback([] { list_strategies(); });
}

}  // namespace

TESSERA_COMMAND(70, setup);

}  // namespace tessera::cli
