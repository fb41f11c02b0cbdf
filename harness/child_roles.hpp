#pragma once
// The processes the harness starts are the `tessera` binary itself, entered
// through hidden subcommands: the sandbox worker (`__worker`), the runner of
// a translation unit's host code (`__runner`, started by the worker) and the
// compile child (`__compile`, or `__compile --serve`: a long-lived compile
// server). One file is deployed; users never call them.
#include <CLI/CLI.hpp>

#include <functional>

namespace tessera {

// Adds the three hidden subcommands to `root`; each one, when run, hands its
// exit code to `set_exit_code`.
void add_child_roles(CLI::App& root, std::function<void(int)> set_exit_code);

}  // namespace tessera
