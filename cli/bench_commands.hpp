#pragma once
// The `tessera bench` subcommands beyond harness and floor (cmd_bench.cpp):
// harness's compile batches (bench_compile.cpp),
// suite (cmd_bench_suite.cpp), compare and report (cmd_bench_report.cpp),
// scale (cmd_bench_scale.cpp).
#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace tessera::cli {

void add_bench_suite_command(CLI::App* bench);
void add_bench_report_commands(CLI::App* bench);
void add_bench_scale_command(CLI::App* bench);

// `tessera bench harness --compile-batch N,...` (bench_compile.cpp): NVRTC
// compiles per second with N at once, a process per compile against the
// compile servers, without and with precompiled headers.
struct CompileBatchArgs {
  std::vector<int> counts;                                  // N per batch
  std::vector<std::string> servers = {"off", "nopch", "pch"};  // TESSERA_COMPILE_SERVER values
  std::string variant_at = "after-includes";                // or "top", "end"
  std::string source;
};
void run_compile_batches(const CompileBatchArgs& a);

}  // namespace tessera::cli
