#include "bench/detail/partial_search.hpp"

#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/fs.hpp"
#include "search/trajectory.hpp"

namespace tessera::bench::detail {

namespace {

namespace fs = std::filesystem;

struct Logs {
  std::vector<nlohmann::json> applied;   // trajectories.jsonl, the good lines
  std::vector<nlohmann::json> outcomes;  // outcomes.jsonl, the good lines
  long long first_unmeasured = std::numeric_limits<long long>::max();
  long long consecutive = 0;  // applied steps 0, 1, ... as the engine wants them
};

long long step_of(const nlohmann::json& j) {
  const auto s = j.find("step");
  return s != j.end() && s->is_number_integer() ? s->get<long long>() : -1;
}

// The machine, not the candidate, failed the step (masked in the search).
bool unmeasured(const nlohmann::json& j) {
  const auto e = j.find("eval");
  return j.value("evaluated", false) && e != j.end() && e->is_object() && e->value("status", "") == "infra_error";
}

Logs read_logs(const fs::path& dir) {
  Logs l;
  l.applied = search::read_jsonl(dir / "trajectories.jsonl");
  l.outcomes = search::read_jsonl(dir / "outcomes.jsonl");
  for (const auto* lines : {&l.applied, &l.outcomes})
    for (const auto& j : *lines)
      if (unmeasured(j)) l.first_unmeasured = std::min(l.first_unmeasured, step_of(j));
  while (l.consecutive < (long long)l.applied.size() && step_of(l.applied[l.consecutive]) == l.consecutive) ++l.consecutive;
  return l;
}

MeasuredSteps measured(const Logs& l) {
  MeasuredSteps m;
  m.steps = std::min(l.consecutive, l.first_unmeasured);
  if (m.steps > 0) {
    const auto& last = l.applied[m.steps - 1];
    if (last.contains("totals") && last["totals"].is_object())
      m.seconds = last["totals"].value("elapsed_s", 0.0);
  }
  return m;
}

std::string lines_before(const std::vector<nlohmann::json>& lines, long long end) {
  std::string out;
  for (const auto& j : lines) {
    const long long s = step_of(j);
    if (s >= 0 && s < end) out += j.dump() + "\n";
  }
  return out;
}

}  // namespace

MeasuredSteps measured_steps(const fs::path& run_dir) {
  std::error_code ec;
  if (!fs::is_directory(run_dir, ec)) return {};
  return measured(read_logs(run_dir));
}

MeasuredSteps keep_measured_steps(const fs::path& run_dir) {
  std::error_code ec;
  if (!fs::is_directory(run_dir, ec)) return {};
  const Logs l = read_logs(run_dir);
  const MeasuredSteps m = measured(l);
  if (m.steps == 0) {
    fs::remove_all(run_dir, ec);
    return {};
  }
  atomic_write_file(run_dir / "trajectories.jsonl", lines_before(l.applied, m.steps));
  atomic_write_file(run_dir / "outcomes.jsonl", lines_before(l.outcomes, l.first_unmeasured));
  return m;
}

}  // namespace tessera::bench::detail
