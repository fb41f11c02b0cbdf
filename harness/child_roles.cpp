#include "harness/child_roles.hpp"

#include <utility>

#include "harness/compiler.hpp"
#include "worker/runner_main.hpp"
#include "worker/worker_session.hpp"

namespace tessera {

void add_child_roles(CLI::App& root, std::function<void(int)> set_exit_code) {
  // The options live as long as the process: CLI11 writes into them while
  // parsing, and the callbacks read them after.
  static worker::WorkerConfig config;
  static worker::RunnerConfig runner_config;
  static std::function<void(int)> exit_with;
  exit_with = std::move(set_exit_code);

  auto* worker = root.add_subcommand("__worker", "sandbox worker process (internal)");
  worker->group("");
  worker->add_option("--device", config.device);
  worker->add_option("--autotune-max-algos", config.autotune_max_algos);
  worker->add_flag("--remeasure-baselines", config.remeasure_baselines);
  worker->callback([] { exit_with(worker::worker_main(config)); });

  auto* runner = root.add_subcommand("__runner", "translation-unit host code under capture (internal)");
  runner->group("");
  runner->add_option("--device", runner_config.device);
  runner->callback([] { exit_with(worker::runner_main(runner_config)); });

  static bool serve = false;
  static std::string pch_dir;
  auto* compile = root.add_subcommand("__compile", "compile child process (internal)");
  compile->group("");
  // --serve: a long-lived compile server (harness/detail/compile_servers.hpp), one request per line;
  // --pch-dir: with NVRTC's automatic precompiled headers, their files there.
  compile->add_flag("--serve", serve);
  compile->add_option("--pch-dir", pch_dir)->needs(compile->get_option("--serve"));
  compile->callback([] { exit_with(serve ? compile_server_main(pch_dir) : compile_child_main()); });
}

}  // namespace tessera
