// `tessera tile`: the tile compiler from the command line (docs/tile.md).
//   emit CONFIG --shape MxNxK      print the generated CUDA source
//   list [--shape] [--limit N]     legal configs of the default space (seeds first);
//        --model                   the cost model's order instead, with its predictions
//   check CONFIG --shape           legality with its reason
//   eval CONFIG --shape            compile, verify and time through the harness
//   tune --shape --budget N        exhaustive or seeded-random search through the harness
#include <algorithm>
#include <cstdio>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "cli/command.hpp"
#include "cli/tile_args.hpp"
#include "core/error.hpp"
#include "tile/config.hpp"
#include "tile/cost_model.hpp"
#include "tile/emit.hpp"
#include "tile/learned_model.hpp"
#include "tile/legality.hpp"
#include "tile/space.hpp"
#include "search/tile_tuner.hpp"

namespace tessera::cli {

namespace {

void cmd_emit(const TileArgs& a) {
  const Task task = task_of(a);
  fmt::print("{}", tile::emit(config_of(a, task), task));
}

nlohmann::json prediction_json(const tile::Prediction& p) {
  return {{"time_us", p.time_us},         {"bound", p.bound},
          {"tiles", p.tiles},             {"ctas", p.ctas},        {"walking_ctas", p.walking_ctas},
          {"ctas_per_sm", p.ctas_per_sm}, {"waves", p.waves},
          {"tail_efficiency", p.tail_efficiency}, {"pad_efficiency", p.pad_efficiency},
          {"bytes_per_flop", p.bytes_per_flop},   {"compute_us", p.compute_us},
          {"memory_us", p.memory_us},     {"overhead_us", p.overhead_us}};
}

// "132 CTAs", or "132 CTAs (128 walk)" where a persistent grid's rounds need fewer.
std::string ctas_text(const tile::Prediction& p) {
  return p.walking_ctas < p.ctas ? fmt::format("{} CTAs ({} walk)", p.ctas, p.walking_ctas) : fmt::format("{} CTAs", p.ctas);
}

// --device-kind auto: the kind of this machine's first GPU, the one tune
// ranks for through its worker (which reads the same name); the pooled model
// where there is no GPU.
std::string resolved_kind(const std::string& kind) {
  if (kind != kAutoKind) return kind;
  int count = 0;
  cudaDeviceProp p{};
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0 || cudaGetDeviceProperties(&p, 0) != cudaSuccess)
    return tile::kEveryKind;
  return tile::device_kind(p.name);
}

// The model tune ranks with on the GPU kind of --device-kind
// (tile::model_for_device), or the analytical one alone.
tile::LearnedModel ranking_model(const TileArgs& a) {
  const std::string kind = resolved_kind(a.device_kind);
  return kind == "analytical" ? tile::LearnedModel{} : tile::model_for_device(kind);
}

void cmd_check(const TileArgs& a) {
  const Task task = task_of(a);
  const tile::Config c = config_of(a, task);
  const tile::Limits limits = limits_of(a);
  const auto l = tile::legality(c, task, limits);
  // A legal config's place in the cost model's order: why a tune measured it
  // early or late, found it only by refining a neighbour, or could not reach it
  // (a knob value off the space's axes, which every move keeps to).
  tile::Prediction p;
  int rank = 0;
  std::size_t ranked_count = 0;
  bool shortlisted = false;
  std::vector<std::string> off_axes;
  if (l.ok) {
    const tile::Space space = tile::default_space(task, limits);
    for (const auto& knob : tile::off_axes(c, space))
      off_axes.push_back(knob == "backend" ? knob : fmt::format("{} {}", knob, tile::get_knob(c, knob)));
    const tile::LearnedModel model = ranking_model(a);
    const auto ranking = tile::rank_configs(task, limits, std::size_t(-1), model);
    ranked_count = ranking.size();
    p = tile::predict_ranked({c}, task, limits, model).front();
    rank = tile::model_rank(ranking, c, task, limits, model);
    for (const auto& r : ranking) shortlisted = shortlisted || tile::name(r.config) == tile::name(c);
  }
  if (a.json) {
    nlohmann::json j{{"name", tile::name(c)}, {"legal", l.ok}, {"reason", l.reason}, {"config", tile::to_json(c)}};
    if (l.ok)
      j["model"] = {{"prediction", prediction_json(p)}, {"rank", rank}, {"shortlisted", shortlisted},
                    {"ranked", ranked_count}, {"off_axes", off_axes}};
    fmt::print("{}\n", j.dump(2));
  } else if (l.ok) {
    fmt::print("legal: {} on {} ({}, {} B smem, {} threads)\n", tile::name(c), task.id(), a.arch,
               tile::dynamic_smem_bytes(c, task), c.threads());
    fmt::print("cost model ({} SMs, {:.0f} TFLOP/s, {:.0f} GB/s): {:.2f} µs predicted, {}-bound, {}, {} waves, "
               "tail {:.2f}, pad {:.2f}; {} of its {} ranked configs\n",
               limits.sm_count, limits.peak_tflops, limits.dram_gbps, p.time_us, p.bound, ctas_text(p), p.waves,
               p.tail_efficiency, p.pad_efficiency,
               shortlisted ? fmt::format("#{}", rank)
               : off_axes.empty()
                   ? fmt::format("not in its shortlist (a refine or search move can reach it); it would be #{}", rank)
                   : fmt::format("not in its shortlist, and off the search space's axes ({}): no refine or search "
                                 "move reaches it from a config without that value; it would be #{}",
                                 fmt::join(off_axes, ", "), rank),
               ranked_count);
  } else {
    fmt::print("illegal: {}: {}\n", tile::name(c), l.reason);
  }
  if (!l.ok) set_exit_code(1);
}

// Seeds first, then the space in enumeration order.
std::vector<tile::Config> listing(const TileArgs& a, const Task& task, const tile::Limits& limits, std::size_t limit) {
  std::vector<tile::Config> out;
  std::set<std::string> seen;
  for (const auto& c : tile::seeds(task, limits))
    if (out.size() < limit && search::in_backend(c, a.backend) && seen.insert(tile::name(c)).second) out.push_back(c);
  for (const auto& c : tile::enumerate(search::tune_space(task, limits, a.backend), task, limits, limit + seen.size()))
    if (out.size() < limit && seen.insert(tile::name(c)).second) out.push_back(c);
  return out;
}

// The cost model's order (what `tile tune` measures first), with what it predicts.
void cmd_list_model(const TileArgs& a, const Task& task) {
  const tile::Limits limits = limits_of(a);
  const tile::LearnedModel model = ranking_model(a);
  std::vector<tile::Ranked> ranked;
  for (auto& r : tile::rank_configs(task, limits, std::size_t(-1), model))
    if (ranked.size() < a.limit && search::in_backend(r.config, a.backend)) ranked.push_back(std::move(r));
  if (a.json) {
    nlohmann::json j = nlohmann::json::array();
    for (const auto& r : ranked) {
      const auto& p = r.prediction;
      j.push_back({{"name", tile::name(r.config)}, {"config", tile::to_json(r.config)}, {"prediction", prediction_json(p)}});
    }
    fmt::print("{}\n", j.dump(2));
    return;
  }
  for (const auto& r : ranked) {
    const auto& p = r.prediction;
    fmt::print("{:<70} {:>9.2f} µs  {:<7} {:>20}  {} waves  tail {:.2f}  pad {:.2f}\n", tile::name(r.config),
               p.time_us, p.bound, ctas_text(p), p.waves, p.tail_efficiency, p.pad_efficiency);
  }
  fmt::print("the cost model's first {} configs for {} on {} ({} SMs, {:.0f} TFLOP/s, {:.0f} GB/s; {}: predictions, "
             "not measurements)\n",
             ranked.size(), task.id(), limits.arch, limits.sm_count, limits.peak_tflops, limits.dram_gbps,
             model.describe());
}

void cmd_list(const TileArgs& a) {
  const Task task = task_of(a);
  if (a.model) return cmd_list_model(a, task);
  const auto configs = listing(a, task, limits_of(a), a.limit);
  if (a.json) {
    nlohmann::json j = nlohmann::json::array();
    for (const auto& c : configs) j.push_back({{"name", tile::name(c)}, {"config", tile::to_json(c)}});
    fmt::print("{}\n", j.dump(2));
    return;
  }
  for (const auto& c : configs)
    fmt::print("{:<64} smem {:>6} B  threads {:>3}\n", tile::name(c), tile::dynamic_smem_bytes(c, task), c.threads());
  fmt::print("{} legal configs listed for {} on {} (raw space {})\n", configs.size(), task.id(), a.arch,
             search::tune_space(task, limits_of(a), a.backend).raw_size());
}

void cmd_eval(const TileArgs& a) {
  const Task task = task_of(a);
  const tile::Config c = config_of(a, task);
  const auto evaluator = evaluator_of(a);
  EvalOptions opt;
  opt.compile_only = compile_only(a);
  const EvalResult r = evaluator->evaluate(search::tile_candidate(c, task), task, opt);
  if (a.json) {
    nlohmann::json j = r;
    fmt::print("{}\n", j.dump(2));
  } else {
    fmt::print("{} on {} via {}\n", task.id(), evaluator->device().name, evaluator->describe());
    print_result_line(tile::name(c), r);
  }
  if (r.status != Status::ok && r.status != Status::compiled) set_exit_code(1);
}

void setup(CLI::App& root) {
  auto args = std::make_shared<TileArgs>();
  auto* tile = root.add_subcommand("tile", "the HGEMM tile compiler: emit, list, check, eval, tune, model");
  tile->require_subcommand(1);

  auto* emit = tile->add_subcommand("emit", "print the CUDA source of a config");
  emit->add_option("config", args->config, "config JSON or name")->required();
  add_tile_task_options(emit, *args);
  emit->callback([args] { cmd_emit(*args); });

  auto* list = tile->add_subcommand("list", "list legal configs (seeds first)");
  add_tile_task_options(list, *args);
  list->add_option("--limit", args->limit, "at most this many")->capture_default_str();
  list->add_option("--backend", args->backend, "only mma_sync or wgmma_tma");
  list->add_option("--smem", args->smem_optin, "opt-in shared memory per block (bytes)")->capture_default_str();
  list->add_flag("--model", args->model, "the cost model's order (what tune measures first) with its predictions");
  const auto device_kind = [&](CLI::App* c) {
    c->add_option("--device-kind", args->device_kind,
                  "the cost model's order: this GPU kind's learned model (h200, h100, ...; all: the pooled one; "
                  "auto: this machine's GPU's, as tune ranks, or the pooled one without a GPU), or analytical")
        ->capture_default_str();
  };
  device_kind(list);
  list->callback([args] { cmd_list(*args); });

  auto* check = tile->add_subcommand("check", "is a config legal for a shape (and why not)");
  check->add_option("config", args->config, "config JSON or name")->required();
  add_tile_task_options(check, *args);
  check->add_option("--smem", args->smem_optin, "opt-in shared memory per block (bytes)")->capture_default_str();
  device_kind(check);
  check->callback([args] { cmd_check(*args); });

  auto* eval = tile->add_subcommand("eval", "compile, verify and time a config through the harness");
  eval->add_option("config", args->config, "config JSON or name")->required();
  add_tile_task_options(eval, *args);
  add_mode_options(eval, args->sandbox);
  eval->callback([args] { cmd_eval(*args); });

  add_tune_command(tile);
  add_model_command(tile);
}

}  // namespace

TESSERA_COMMAND(40, setup);

}  // namespace tessera::cli
