#include "cli/sandbox_args.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/fs.hpp"

namespace tessera::cli {

namespace {

// The JSON text of --sandbox-options: given inline, or @FILE.
nlohmann::json options_json(const std::string& text) {
  const std::string body = !text.empty() && text.front() == '@' ? read_file(text.substr(1)) : text;
  auto j = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) fail_bad_input("--sandbox-options is not valid JSON (give the JSON itself or @FILE)");
  return j;
}

}  // namespace

void add_mode_options(CLI::App* cmd, SandboxArgs& a, EvalMode fallback) {
  a.fallback = fallback;
  cmd->add_option("--mode", a.mode, fmt::format("auto, full or compile_only (default: {})", to_string(fallback)));
  cmd->add_flag("--compile-only", a.compile_only, "same as --mode compile_only: compile and check only (no GPU needed)");
}

void add_sandbox_options(CLI::App* cmd, SandboxArgs& a, std::map<std::string, std::string> refused) {
  a.refused = std::move(refused);
  cmd->add_option("--sandbox-options", a.options,
                  "sandbox settings as JSON or @FILE, any key of SandboxOptions (docs/harness.md), e.g. "
                  "'{\"infra_retries\": 2}'");
}

EvalMode mode_of(const SandboxArgs& a) {
  const EvalMode asked = a.mode.empty() ? a.fallback : parse_eval_mode(a.mode);
  if (a.compile_only && !a.mode.empty() && asked != EvalMode::compile_only)
    fail_bad_input(fmt::format("--compile-only and --mode {} contradict each other", a.mode));
  return a.compile_only ? EvalMode::compile_only : asked;
}

SandboxOptions sandbox_options_of(const SandboxArgs& a, const SandboxOptions& base) {
  SandboxOptions o = base;
  bool options_name_mode = false;
  if (!a.options.empty()) {
    const nlohmann::json j = options_json(a.options);
    for (const auto& [key, why] : a.refused)
      if (j.is_object() && j.contains(key)) fail_bad_input(fmt::format("--sandbox-options: '{}' is not set here: {}", key, why));
    o = parse_sandbox_options(j, base, "--sandbox-options");
    options_name_mode = j.contains("mode");
  }
  // --mode or --compile-only win; without them, --sandbox-options' mode does.
  if (!a.mode.empty() || a.compile_only || !options_name_mode) o.mode = mode_of(a);
  return o;
}

}  // namespace tessera::cli
