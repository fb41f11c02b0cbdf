#pragma once
// The `tessera bench` subcommands beyond harness and floor (cmd_bench.cpp):
// suite (cmd_bench_suite.cpp), compare and report (cmd_bench_report.cpp),
// scale (cmd_bench_scale.cpp).
#include <CLI/CLI.hpp>

namespace tessera::cli {

void add_bench_suite_command(CLI::App* bench);
void add_bench_report_commands(CLI::App* bench);
void add_bench_scale_command(CLI::App* bench);

}  // namespace tessera::cli
