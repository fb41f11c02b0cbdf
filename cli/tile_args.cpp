#include "cli/tile_args.hpp"

#include <fmt/format.h>

#include "cli/task_args.hpp"
#include "core/error.hpp"
#include "harness/sandbox.hpp"

namespace tessera::cli {

Task task_of(const TileArgs& a) { return task_from_shape(a.shape, a.layout, a.epilogue); }

tile::Limits limits_of(const TileArgs& a) {
  tile::Limits l;
  l.arch = a.arch;
  l.smem_optin_bytes = a.smem_optin;
  return l;
}

tile::Config config_of(const TileArgs& a, const Task& task) {
  tile::Config c = tile::parse_config(a.config);
  const bool names_epilogue = a.config.find("epilogue\"") != std::string::npos || a.config.find('{') == std::string::npos;
  if (!names_epilogue) c.epilogue = task.epilogue;
  return c;
}

void print_result_line(const std::string& name, const EvalResult& r) {
  if (r.status == Status::ok) {
    // A tune's sweep times no baselines (only the winner's confirmation does).
    const std::string vs = r.best_baseline.empty() ? std::string("(baselines not timed)")
                                                   : fmt::format("{:.3f}x vs {}", r.speedup, r.best_baseline);
    fmt::print("{:<64} {:>9.2f} µs {:>7.1f} TFLOP/s {:>5.1f}% peak  {}\n", name, r.cold.median_us, r.tflops,
               100.0 * r.peak_fraction, vs);
  } else {
    fmt::print("{:<64} {}: {}\n", name, to_string(r.status), r.reason);
  }
}

std::unique_ptr<Evaluator> evaluator_of(const TileArgs& a) { return make_evaluator(sandbox_options_of(a.sandbox)); }

bool compile_only(const TileArgs& a) { return mode_of(a.sandbox) == EvalMode::compile_only; }

void add_tile_task_options(CLI::App* c, TileArgs& a) {
  c->add_option("--shape", a.shape, "MxNxK")->capture_default_str();
  c->add_option("--layout", a.layout, "TN or NN")->capture_default_str();
  c->add_option("--epilogue", a.epilogue, "none, bias, bias_relu, bias_gelu")->capture_default_str();
  c->add_option("--arch", a.arch, "target architecture for legality (sm_80, sm_90a ...)")->capture_default_str();
  c->add_flag("--json", a.json, "machine-readable output");
}

}  // namespace tessera::cli
