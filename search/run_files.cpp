#include "search/run_files.hpp"

#include <fmt/format.h>

#include "core/fs.hpp"

namespace tessera::search {

namespace fs = std::filesystem;

fs::path best_kernel_path(const fs::path& run_dir, const std::string& task_id) {
  return run_dir / "best" / (task_id + ".cu");
}

std::string best_kernel_text(const TaskState& ts) {
  if (!ts.best) return "";
  const auto& b = *ts.best;
  const auto& r = b.result;
  std::string head = fmt::format(
      "// tessera search: best kernel for {} (step {})\n"
      "// kind: {}; cold median {:.3f} us; {:.1f} TFLOP/s; {:.3f}x vs {} ({:.3f} us, same run); {:.1f}% of peak\n"
      "// verified: {} ({} trials); timing: {} samples, spread {:.2f}%\n",
      ts.id, b.id, to_string(b.candidate.kind), r.cold.median_us, r.tflops, r.speedup, r.best_baseline,
      r.best_baseline_us, 100.0 * r.peak_fraction, r.verify.status, r.verify.trials, r.cold.samples,
      100.0 * r.cold.rel_spread);
  if (b.candidate.meta.is_object() && b.candidate.meta.contains("tile_config"))
    head += "// tile_config: " + b.candidate.meta["tile_config"].dump() + "\n";
  return head + "\n" + b.candidate.source + (b.candidate.source.ends_with('\n') ? "" : "\n");
}

void write_best_kernel(const fs::path& run_dir, const TaskState& ts) {
  if (!ts.best) return;
  fs::create_directories(run_dir / "best");
  atomic_write_file(best_kernel_path(run_dir, ts.id), best_kernel_text(ts));
}

nlohmann::json state_summary(const SearchState& state, const SearchMethod& method, double elapsed_s) {
  nlohmann::json tasks = nlohmann::json::array();
  for (const auto& t : state.tasks()) {
    nlohmann::json best = nullptr;
    if (t.best)
      best = {{"step", t.best->id},
              {"speedup", t.best->result.speedup},
              {"tflops", t.best->result.tflops},
              {"median_us", t.best->result.cold.median_us},
              {"peak_fraction", t.best->result.peak_fraction}};
    tasks.push_back({{"task_id", t.id},
                     {"steps", t.steps},
                     {"evaluations", t.evaluations},
                     {"population", t.population.size()},
                     {"archive_cells", t.archive.size()},
                     {"best", best}});
  }
  return {{"schema", "tessera.search_state/1"}, {"totals", state.totals()}, {"elapsed_s", elapsed_s},
          {"tasks", tasks},                     {"method", method.describe()}};
}

void write_state_summary(const fs::path& run_dir, const SearchState& state, const SearchMethod& method,
                         double elapsed_s) {
  atomic_write_file(run_dir / "state.json", state_summary(state, method, elapsed_s).dump(2) + "\n");
}

}  // namespace tessera::search
