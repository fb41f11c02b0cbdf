#pragma once
// --include-dir / --nvcc-flag / --torch-entry: build options for
// bring-your-own translation units (harness/candidate_build.hpp), shared by
// `tessera eval` and `tessera bench suite`.
#include <CLI/CLI.hpp>

#include "harness/candidate_build.hpp"

namespace tessera::cli {

void add_build_options(CLI::App* cmd, BuildOptions& build);

}  // namespace tessera::cli
