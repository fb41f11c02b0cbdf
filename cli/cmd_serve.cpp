// tessera serve: the RL environment as an HTTP service (docs/serve.md).

#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "cli/command.hpp"
#include "cli/sandbox_args.hpp"
#include "cli/task_args.hpp"
#include "env/env.hpp"
#include "core/error.hpp"
#include "core/fs.hpp"
#include "harness/sandbox.hpp"
#include "serve/backend.hpp"
#include "serve/evaluator_slots.hpp"
#include "serve/server.hpp"
#include "serve/service.hpp"

namespace {

namespace serve = tessera::serve;

constexpr const char* kTokenVariable = "TESSERA_SERVE_TOKEN";

struct Args {
  serve::ServeOptions o;
  std::string gpus = "all";
  tessera::cli::SandboxArgs sandbox;
  std::string token_file;
  std::string env_config;
  tessera::cli::TaskArgs task;
  bool allow_translation_units = false;
};

bool loopback(const std::string& host) { return host == "127.0.0.1" || host == "::1" || host == "localhost"; }

// The token from --token-file, else $TESSERA_SERVE_TOKEN; surrounding
// whitespace (a trailing newline) is not part of it.
std::string read_token(const std::string& file) {
  std::string t;
  if (!file.empty()) t = tessera::read_file(file);
  else if (const char* v = std::getenv(kTokenVariable)) t = v;
  const auto b = t.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return {};
  return t.substr(b, t.find_last_not_of(" \t\r\n") - b + 1);
}

// The one EnvConfig every session, /v1/evaluate and /get_reward is judged
// under (env/judge.hpp).
tessera::env::EnvConfig env_config(const Args& a) {
  tessera::env::EnvConfig c;
  if (!a.env_config.empty()) c = tessera::env::EnvConfig::from_json(nlohmann::json::parse(tessera::read_file(a.env_config)));
  c.actions.translation_unit = a.allow_translation_units;
  return c;
}

void run(Args a) {
  a.o.token = read_token(a.token_file);
  if (!a.task.shape.empty() || !a.task.task_json.empty()) a.o.default_task = tessera::cli::resolve_task(a.task);
  const auto config = env_config(a);

  const tessera::SandboxOptions so = tessera::cli::sandbox_options_of(a.sandbox);
  const auto devices =
      serve::parse_gpu_list(a.gpus, so.mode == tessera::EvalMode::compile_only ? 0 : tessera::cuda_device_count());
  auto slots = std::make_shared<serve::EvaluatorSlots>(serve::sandbox_factories(so, devices));
  slots->pool()->start_all();  // workers up (device known) before the first request
  serve::Service service(a.o, serve::make_env_backend(slots, config));
  serve::HttpServer server(service, a.o);

  if (a.o.token.empty() && !loopback(a.o.host))
    spdlog::warn("listening on {} without a token: anyone who reaches the port can evaluate (--token-file)", a.o.host);
  for (std::size_t i = 0; i < slots->size(); ++i)
    fmt::print("evaluator {}: {}\n", i, slots->pool()->evaluator(i).describe());
  fmt::print("tessera serve: listening on http://{}:{} (queue {}, batch {}, auth {}, actions: {})\n", a.o.host,
             server.port(), a.o.queue_capacity, a.o.max_batch, a.o.token.empty() ? "off" : "bearer token",
             config.actions.translation_unit ? "device-only, diff, tile config, translation unit"
                                          : "device-only, diff, tile config");
  std::fflush(stdout);
  server.run(/*handle_signals=*/true);
  if (service.in_flight() > 0) {
    // The drain timed out: the evaluations still running cannot be waited
    // for any longer, and destroying the service under them is not safe. The
    // sandbox workers see their pipes close and exit.
    fmt::print("tessera serve: stopped with {} requests unfinished\n", service.in_flight());
    std::fflush(stdout);
    std::_Exit(1);
  }
  fmt::print("tessera serve: stopped\n");
}

void setup(CLI::App& root) {
  static Args a;
  auto* cmd = root.add_subcommand("serve", "Serve the RL environment over HTTP (sessions, evaluate, /get_reward, /metrics)");
  cmd->add_option("--host", a.o.host, "address to listen on")->capture_default_str();
  cmd->add_option("--port", a.o.port, "port (0: any free one, printed at start)")->capture_default_str();
  cmd->add_option("--gpus", a.gpus, "'all' or device ordinals like 0,1: one evaluator each (compile-only: one slot each)")
      ->capture_default_str();
  tessera::cli::add_mode_options(cmd, a.sandbox);
  tessera::cli::add_sandbox_options(
      cmd, a.sandbox, {{"infra_retries", "the service retries an infra_error itself, --env-config's infra_retries times"}});
  cmd->add_option("--queue", a.o.queue_capacity, "evaluations admitted at once (queued + running); more get 429")
      ->capture_default_str();
  cmd->add_option("--max-batch", a.o.max_batch, "items per /v1/evaluate/batch or /get_reward call")->capture_default_str();
  cmd->add_option("--max-body", a.o.max_body_bytes, "largest request body, bytes")->capture_default_str();
  cmd->add_option("--deadline", a.o.default_deadline_s, "seconds a request may take unless X-Tessera-Deadline says")
      ->capture_default_str();
  cmd->add_option("--max-deadline", a.o.max_deadline_s, "the most X-Tessera-Deadline may ask, seconds")->capture_default_str();
  cmd->add_option("--session-ttl", a.o.session_ttl_s, "seconds an idle session lives")->capture_default_str();
  cmd->add_option("--max-sessions", a.o.max_sessions, "live sessions at once")->capture_default_str();
  cmd->add_option("--compile-threads", a.o.compile_threads, "compile pool threads (0: one per core)")->capture_default_str();
  cmd->add_option("--io-threads", a.o.io_threads, "HTTP threads")->capture_default_str();
  cmd->add_option("--retry-after", a.o.retry_after_s, "Retry-After of a 429, seconds")->capture_default_str();
  cmd->add_option("--drain", a.o.drain_s, "SIGTERM: the longest wait for requests in flight, seconds")->capture_default_str();
  cmd->add_option("--token-file", a.token_file,
                  std::string("file holding the bearer token (default: $") + kTokenVariable + "; none: no auth)");
  cmd->add_flag("--open-reward", a.o.open_reward, "no token needed for /get_reward (OpenRLHF sends no headers)");
  cmd->add_option("--masked-reward", a.o.masked_reward, "the number /get_reward gives a masked (infra_error) item")
      ->capture_default_str();
  cmd->add_flag("--allow-translation-units", a.allow_translation_units,
                "accept full translation units (they run the policy's host code, confined): trusted policies only");
  cmd->add_option("--env-config", a.env_config, "EnvConfig JSON for sessions and evaluations (docs/env.md)");
  cmd->add_flag("--fault-injection", a.o.fault_injection, "enable POST /v1/admin/kill_worker (tests and drills)");
  tessera::cli::add_task_options(cmd, a.task);
  cmd->callback([] { run(a); });
}

}  // namespace

TESSERA_COMMAND(65, setup);
