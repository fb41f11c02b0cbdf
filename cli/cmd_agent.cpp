// tessera agent ping | prompt | propose | strategies: check an LLM endpoint,
// inspect the prompt, run one LLM proposal, list the strategy arms.
#include <cstdio>
#include <memory>

#include <fmt/format.h>

#include "agent/client.hpp"
#include "agent/llm_proposer.hpp"
#include "agent/prompt.hpp"
#include "agent/strategies.hpp"
#include "cli/command.hpp"
#include "cli/task_args.hpp"
#include "core/candidate.hpp"
#include "core/error.hpp"
#include "core/fs.hpp"

namespace tessera::cli {

namespace {

constexpr double kPingTimeoutS = 60.0;
constexpr int kPingMaxTokens = 64;
constexpr int kPingAttempts = 2;

struct EndpointArgs {
  std::string base_url, model, api_key_env = agent::kDefaultApiKeyEnv, provider = "openai", config_file;
  bool stream = false;
  CLI::Option* api_key_env_option = nullptr;
};

void add_endpoint_options(CLI::App* cmd, EndpointArgs& a) {
  cmd->add_option("--base-url", a.base_url, "API root, e.g. https://api.openai.com/v1 or http://127.0.0.1:8000/v1");
  cmd->add_option("--model", a.model, "model name as the server knows it");
  a.api_key_env_option =
      cmd->add_option("--api-key-env", a.api_key_env, "environment variable holding the API key")->capture_default_str();
  cmd->add_option("--provider", a.provider, "openai (Chat Completions) or anthropic (Messages)")
      ->check(CLI::IsMember({"openai", "anthropic"}))
      ->capture_default_str();
  cmd->add_option("--config", a.config_file,
                  "endpoint JSON file instead of --base-url: every endpoint of it (or the one --model names)")
      ->check(CLI::ExistingFile);
  cmd->add_flag("--stream", a.stream, "use server-sent events");
}

// Every endpoint of --config (only the member --model names, when given), or
// the one endpoint of --base-url and --model.
std::vector<agent::EndpointConfig> endpoints_from_args(const EndpointArgs& a, const char* command) {
  std::vector<agent::EndpointConfig> out;
  if (!a.config_file.empty()) {
    out = agent::load_endpoint_configs(a.config_file);
    if (!a.model.empty()) {
      std::vector<std::string> labels;
      std::vector<agent::EndpointConfig> chosen;
      for (const auto& c : out) {
        labels.push_back(c.label());
        if (c.label() == a.model || c.model == a.model) chosen.push_back(c);
      }
      if (chosen.empty())
        fail_bad_input(fmt::format("--model '{}' is not an endpoint of {} (it has: {})", a.model, a.config_file,
                                   fmt::join(labels, ", ")));
      out = std::move(chosen);
    }
  } else {
    if (a.base_url.empty() || a.model.empty())
      fail_bad_input(fmt::format("agent {} needs --base-url and --model (or --config FILE)", command));
    agent::EndpointConfig c;
    c.base_url = a.base_url;
    c.model = a.model;
    c.provider = agent::parse_provider(a.provider);
    if (c.provider == agent::Provider::anthropic) c.api_key_env = "ANTHROPIC_API_KEY";
    out.push_back(std::move(c));
  }
  for (auto& c : out) {
    if (a.api_key_env_option != nullptr && a.api_key_env_option->count() > 0) c.api_key_env = a.api_key_env;
    if (a.stream) c.stream = true;
  }
  return out;
}

std::string cost_text(bool priced, double usd) {
  return priced ? fmt::format("${:.6f}", usd) : std::string("unknown (model not in the price table)");
}

struct PingArgs {
  EndpointArgs endpoint;
  std::string prompt = "Reply with one short sentence: which model are you?";
  double timeout_s = kPingTimeoutS;
};

// One endpoint; false when it failed (the error is on stderr).
bool ping_one(agent::EndpointConfig config, const PingArgs& a) {
  config.max_tokens = kPingMaxTokens;
  config.total_timeout_s = a.timeout_s;
  config.connect_timeout_s = std::min(config.connect_timeout_s, a.timeout_s);
  config.retry.max_attempts = kPingAttempts;
  auto client = agent::make_client(config);
  agent::ChatRequest request;
  request.messages = {{"user", a.prompt}};
  const agent::ChatResult r = client->chat(request);
  if (!r.ok) {
    std::fprintf(stderr, "error: ping %s (%s) failed [%s]: %s\n", config.base_url.c_str(), config.model.c_str(),
                 agent::to_string(r.error_kind).c_str(), r.error.c_str());
    return false;
  }
  fmt::print("endpoint:   {} ({})\n", config.base_url, agent::to_string(config.provider));
  fmt::print("model:      {}\n", r.model);
  fmt::print("latency:    {:.0f} ms ({} attempt{})\n", r.usage.latency_ms, r.attempts, r.attempts == 1 ? "" : "s");
  fmt::print("tokens:     {} prompt, {} completion, {} reasoning\n", r.usage.prompt_tokens, r.usage.completion_tokens,
             r.usage.reasoning_tokens);
  fmt::print("cost:       {}\n", cost_text(r.priced, r.usage.cost_usd));
  fmt::print("finish:     {}\n", r.finish_reason.empty() ? "-" : r.finish_reason);
  if (!r.reasoning.empty()) fmt::print("reasoning:  {} characters\n", r.reasoning.size());
  fmt::print("reply:      {}\n", r.content);
  return true;
}

// Pings every endpoint in turn, so a mistake in any member of a file shows.
void run_ping(const PingArgs& a) {
  const auto endpoints = endpoints_from_args(a.endpoint, "ping");
  std::size_t failed = 0;
  for (std::size_t i = 0; i < endpoints.size(); ++i) {
    if (endpoints.size() > 1)
      fmt::print("{}== {} ({} of {}) ==\n", i ? "\n" : "", endpoints[i].label(), i + 1, endpoints.size());
    std::fflush(stdout);  // stdout and stderr lines stay in order on a terminal
    if (!ping_one(endpoints[i], a)) ++failed;
    std::fflush(stdout);
  }
  if (endpoints.size() > 1) fmt::print("\n{} of {} endpoints answered\n", endpoints.size() - failed, endpoints.size());
  if (failed > 0) set_exit_code(1);
}

struct ContextArgs {
  TaskArgs task;
  std::string kernel_file, result_file, strategy;
  std::size_t max_prompt_tokens = agent::kDefaultMaxPromptTokens;
};

void add_context_options(CLI::App* cmd, ContextArgs& a) {
  add_task_options(cmd, a.task);
  cmd->add_option("--kernel", a.kernel_file, "the current kernel (.cu); none: a from-scratch prompt")->check(CLI::ExistingFile);
  cmd->add_option("--result", a.result_file, "its evaluation result JSON (tessera eval --json)")->check(CLI::ExistingFile);
  cmd->add_option("--strategy", a.strategy, "strategy arm (tessera agent strategies)");
  cmd->add_option("--max-prompt-tokens", a.max_prompt_tokens, "token budget for the prompt")->capture_default_str();
}

agent::ProposalContext context_from_args(const ContextArgs& a) {
  agent::ProposalContext c;
  c.task = resolve_task(a.task);
  c.strategy = a.strategy;
  if (a.kernel_file.empty()) {
    if (!a.result_file.empty()) fail_bad_input("--result needs --kernel (the result describes that kernel)");
    return c;
  }
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
  return c;
}

agent::PromptOptions prompt_options(const ContextArgs& a) {
  agent::PromptOptions o;
  o.max_prompt_tokens = a.max_prompt_tokens;
  return o;
}

// Renders the prompt the LLM proposer would send, without sending it.
void show_prompt(const ContextArgs& a) {
  const auto messages = agent::PromptBuilder(prompt_options(a)).build(context_from_args(a));
  std::size_t tokens = 0;
  for (const auto& m : messages) {
    fmt::print("===== {} (~{} tokens at {} characters per token) =====\n{}\n", m.role, agent::approx_tokens(m.content),
               agent::kCharsPerToken, m.content);
    tokens += agent::approx_tokens(m.content);
  }
  fmt::print("===== total ~{} tokens (budget {}) =====\n", tokens, a.max_prompt_tokens);
}

struct ProposeArgs {
  EndpointArgs endpoint;
  ContextArgs context;
  std::uint64_t seed = 0;
  double temperature = -1;
  std::string cache = "off", out_file;
  bool json = false;
};

// One LlmProposer call: the candidate goes to --out (or stdout), the rest to stderr.
void run_propose(const ProposeArgs& a) {
  agent::LlmProposerOptions o;
  o.endpoints = endpoints_from_args(a.endpoint, "propose");  // an ensemble: the seed draws the member
  o.prompt = prompt_options(a.context);
  o.cache_mode = agent::parse_cache_mode(a.cache);
  agent::ProposalContext c = context_from_args(a.context);
  c.seed = a.seed;
  c.temperature = a.temperature;
  const agent::Proposal p = agent::make_llm_proposer(std::move(o))->propose(c);
  if (a.json) fmt::print("{}\n", nlohmann::json(p).dump(2));
  std::fprintf(stderr, "endpoint %s, model %s, %lld+%lld tokens, %.0f ms, cost %s\n",
               p.proposer_info.value("endpoint", "").c_str(), p.proposer_info.value("model", "").c_str(),
               p.usage.prompt_tokens, p.usage.completion_tokens, p.usage.latency_ms,
               cost_text(p.proposer_info.value("priced", true), p.usage.cost_usd).c_str());
  if (!p.ok) {
    std::fprintf(stderr, "error: no candidate: %s\n", p.error.c_str());
    set_exit_code(1);
    return;
  }
  std::fprintf(stderr, "%s candidate %s (%s)\n", p.action_kind.c_str(), p.candidate.name.c_str(), to_string(p.candidate.kind).c_str());
  if (!a.out_file.empty()) atomic_write_file(a.out_file, p.candidate.source);
  else if (!a.json) fmt::print("{}", p.candidate.source);
}

void list_strategies() {
  fmt::print("{:<20} {:<16} {:<8} {}\n", "strategy", "target resource", "class", "focus");
  for (const auto& s : agent::strategies())
    fmt::print("{:<20} {:<16} {:<8} {}\n", s.name, s.target_resource, s.resource_class, s.summary);
}

void setup(CLI::App& root) {
  auto* agent_cmd = root.add_subcommand("agent", "LLM endpoints, prompts and strategy arms (docs/agent.md)");
  agent_cmd->require_subcommand(1);

  auto ping_args = std::make_shared<PingArgs>();
  auto* ping = agent_cmd->add_subcommand("ping", "send a tiny chat request and print model, latency, tokens and the reply");
  add_endpoint_options(ping, ping_args->endpoint);
  ping->add_option("--prompt", ping_args->prompt, "the message to send");
  ping->add_option("--timeout", ping_args->timeout_s, "seconds per attempt")->check(CLI::PositiveNumber)->capture_default_str();
  ping->callback([ping_args] { run_ping(*ping_args); });

  auto prompt_args = std::make_shared<ContextArgs>();
  auto* prompt = agent_cmd->add_subcommand("prompt", "print the prompt the LLM proposer would send (nothing is sent)");
  add_context_options(prompt, *prompt_args);
  prompt->callback([prompt_args] { show_prompt(*prompt_args); });

  auto propose_args = std::make_shared<ProposeArgs>();
  auto* propose = agent_cmd->add_subcommand("propose", "ask the LLM for one candidate kernel (not evaluated)");
  add_endpoint_options(propose, propose_args->endpoint);
  add_context_options(propose, propose_args->context);
  propose->add_option("--seed", propose_args->seed, "sampling seed (also the cache's sample index)")->capture_default_str();
  propose->add_option("--temperature", propose_args->temperature, "sampling temperature; < 0: the endpoint's")->capture_default_str();
  propose->add_option("--cache", propose_args->cache, "off, read_write or replay")->capture_default_str();
  propose->add_option("--out", propose_args->out_file, "write the candidate source here (default: stdout)");
  propose->add_flag("--json", propose_args->json, "print the whole proposal (messages, usage, action) as JSON");
  propose->callback([propose_args] { run_propose(*propose_args); });

  auto* strat = agent_cmd->add_subcommand("strategies", "list the optimisation strategies (the bandit's arms)");
  strat->callback([] { list_strategies(); });
}

}  // namespace

TESSERA_COMMAND(70, setup);

}  // namespace tessera::cli
