// tessera: LLM-agent kernel search harness. See README.md.
#include <algorithm>
#include <cstdio>
#include <vector>

#include <fmt/format.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "cli/command.hpp"
#include "core/error.hpp"

namespace tessera::cli {

namespace {
struct Entry {
  int order;
  CommandSetup setup;
};
std::vector<Entry>& registry() {
  static std::vector<Entry> r;
  return r;
}
int g_exit_code = 0;
}  // namespace

bool register_command(int order, CommandSetup setup) {
  registry().push_back({order, std::move(setup)});
  return true;
}

void setup_all(CLI::App& root) {
  auto& r = registry();
  std::stable_sort(r.begin(), r.end(), [](const Entry& a, const Entry& b) { return a.order < b.order; });
  for (auto& e : r) e.setup(root);
}

void set_exit_code(int code) { g_exit_code = code; }
int exit_code() { return g_exit_code; }

}  // namespace tessera::cli

int main(int argc, char** argv) {
  // Logs go to stderr: stdout carries --json records, and a worker's stdout is
  // its wire to the parent (spdlog's default logger writes to stdout).
  spdlog::set_default_logger(spdlog::stderr_color_mt("tessera"));
  CLI::App app{"tessera: search for fast CUDA kernels, verified and timed honestly against cuBLAS"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "tessera 0.1.0");
  tessera::cli::setup_all(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const tessera::Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return e.kind() == tessera::Error::Kind::internal ? 3 : 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "internal error: %s\n", e.what());
    return 3;
  }
  return tessera::cli::exit_code();
}
