#pragma once
// What the `tessera tile` subcommands share: their options and the helpers that
// turn them into a task, limits, a config and a harness candidate.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include "cli/sandbox_args.hpp"
#include "core/result.hpp"
#include "core/task.hpp"
#include "harness/evaluator.hpp"
#include "tile/config.hpp"
#include "tile/legality.hpp"
#include "tile/space.hpp"

namespace tessera::cli {

inline constexpr const char* kDefaultTileShape = "4096x4096x4096";
inline constexpr const char* kAutoKind = "auto";  // --device-kind: the local GPU's kind

struct TileArgs {
  std::string config;
  std::string shape = kDefaultTileShape;
  std::string layout = "TN";
  std::string epilogue = "none";
  std::string arch = "sm_90a";
  int smem_optin = tile::kH100SmemOptinBytes;
  std::size_t limit = 50;
  std::string backend;  // list/tune: only this backend (mma_sync | wgmma_tma); empty = all
  bool json = false;
  SandboxArgs sandbox;  // eval/tune: --mode, --compile-only
  bool model = false;  // list: the cost model's order
  // list --model, check: whose learned model ranks ("analytical": none; kAutoKind: the local GPU's kind).
  std::string device_kind = kAutoKind;
};

Task task_of(const TileArgs& a);
tile::Limits limits_of(const TileArgs& a);
// A config from the command line takes the task's epilogue unless it names one.
tile::Config config_of(const TileArgs& a, const Task& task);
void print_result_line(const std::string& name, const EvalResult& r);
std::unique_ptr<Evaluator> evaluator_of(const TileArgs& a);
// --compile-only or --mode compile_only.
bool compile_only(const TileArgs& a);
// --shape/--layout/--epilogue/--arch/--json on a tile subcommand.
void add_tile_task_options(CLI::App* c, TileArgs& a);

// `tessera tile tune` (cli/tile_tune.cpp).
void add_tune_command(CLI::App* tile);
// `tessera tile model train|eval` (tile_model.cpp).
void add_model_command(CLI::App* tile);

}  // namespace tessera::cli
