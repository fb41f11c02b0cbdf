#pragma once
// Each subcommand lives in its own cli/cmd_*.cpp and registers itself, so
// adding a command never touches main.cpp.
#include <functional>

#include <CLI/CLI.hpp>

namespace tessera::cli {

using CommandSetup = std::function<void(CLI::App& root)>;

// Returns true so it can initialise a static in the command's file.
bool register_command(int order, CommandSetup setup);
void setup_all(CLI::App& root);

// Exit code a subcommand callback wants (set via set_exit_code).
void set_exit_code(int code);
int exit_code();

}  // namespace tessera::cli

#define TESSERA_CONCAT_INNER(a, b) a##b
#define TESSERA_CONCAT(a, b) TESSERA_CONCAT_INNER(a, b)
// TESSERA_COMMAND(order, setup_fn): order fixes the --help listing order.
#define TESSERA_COMMAND(order, fn) \
  static const bool TESSERA_CONCAT(tessera_cmd_registered_, __LINE__) = ::tessera::cli::register_command(order, fn)
