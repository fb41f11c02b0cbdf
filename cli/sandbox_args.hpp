#pragma once
// The evaluation mode and the sandbox's options on the command line, one
// spelling on every command that evaluates:
//   --mode auto|full|compile_only
//   --compile-only                     the same as --mode compile_only
//   --sandbox-options JSON|@FILE       any SandboxOptions key (core/wire.hpp), read strictly
// --sandbox-options is read over the command's own flags (--device,
// --compile-timeout ...); the mode of --mode or --compile-only wins over its
// "mode".
#include <map>
#include <string>

#include <CLI/CLI.hpp>

#include "core/wire.hpp"

namespace tessera::cli {

struct SandboxArgs {
  std::string mode;           // --mode; empty: not given
  bool compile_only = false;  // --compile-only
  std::string options;        // --sandbox-options
  EvalMode fallback = EvalMode::auto_detect;  // the command's mode when none is given
  // Keys --sandbox-options may not set on this command, with why (a
  // judging service retries itself, so its sandbox's infra_retries is not its own).
  std::map<std::string, std::string> refused;
};

// --mode and --compile-only; `fallback` is the mode when neither is given.
void add_mode_options(CLI::App* cmd, SandboxArgs& a, EvalMode fallback = EvalMode::auto_detect);
// --sandbox-options; `refused`: keys it may not set here, with why.
void add_sandbox_options(CLI::App* cmd, SandboxArgs& a, std::map<std::string, std::string> refused = {});

// The mode asked for (the command's fallback when none): bad_input for an
// unknown one, or --compile-only with another --mode.
EvalMode mode_of(const SandboxArgs& a);
// `base` with --sandbox-options read over it, then the mode of --mode or
// --compile-only (or, when neither is given, of --sandbox-options, else the
// fallback).
SandboxOptions sandbox_options_of(const SandboxArgs& a, const SandboxOptions& base = {});

}  // namespace tessera::cli
