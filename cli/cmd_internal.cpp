// Hidden subcommands: the sandbox worker and the compile child. The harness
// starts them; users never need to.
#include "cli/command.hpp"
#include "harness/compiler.hpp"
#include "harness/gpu/runner_main.hpp"
#include "harness/gpu/worker_session.hpp"

namespace {

void setup(CLI::App& root) {
  auto* worker = root.add_subcommand("__worker", "sandbox worker process (internal)");
  worker->group("");
  static tessera::gpu::WorkerConfig config;
  worker->add_option("--device", config.device);
  worker->add_option("--autotune-max-algos", config.autotune_max_algos);
  worker->add_flag("--remeasure-baselines", config.remeasure_baselines);
  worker->callback([] { tessera::cli::set_exit_code(tessera::gpu::worker_main(config)); });

  auto* runner = root.add_subcommand("__runner", "translation-unit host code under capture (internal)");
  runner->group("");
  static tessera::gpu::RunnerConfig runner_config;
  runner->add_option("--device", runner_config.device);
  runner->callback([] { tessera::cli::set_exit_code(tessera::gpu::runner_main(runner_config)); });

  auto* compile = root.add_subcommand("__compile", "compile child process (internal)");
  compile->group("");
  compile->callback([] { tessera::cli::set_exit_code(tessera::compile_child_main()); });
}

}  // namespace

TESSERA_COMMAND(900, setup);
