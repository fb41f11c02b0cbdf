#pragma once
// The task options every subcommand that takes a task shares:
// --task JSON | --shape MxNxK [--layout TN|NN] [--epilogue none|bias|bias_relu|bias_gelu].
#include <string>

#include <CLI/CLI.hpp>

#include "core/task.hpp"

namespace tessera::cli {

struct TaskArgs {
  std::string task_json;
  std::string shape;
  std::string layout = "TN";
  std::string epilogue = "none";
};

void add_task_options(CLI::App* cmd, TaskArgs& args);
// Throws bad_input with a one-line message when neither or both are given.
Task resolve_task(const TaskArgs& args);

}  // namespace tessera::cli
