// How a measured kernel is described to the model.
#include <algorithm>
#include <vector>

#include <fmt/format.h>

#include "agent/prompt.hpp"
#include "agent/strategies.hpp"

namespace tessera::agent {

namespace {
constexpr std::size_t kMaxReasonChars = 200;  // a history line stays one line

std::string trim_log(const std::string& log, std::size_t max_chars) {
  if (log.size() <= max_chars) return log;
  // The first errors explain the rest; keep the head and a short tail.
  const std::size_t tail = max_chars / 4;
  const std::size_t head = max_chars - tail;
  return log.substr(0, head) + fmt::format("\n[... {} characters trimmed ...]\n", log.size() - head - tail) +
         log.substr(log.size() - tail);
}

std::string timing_line(const char* label, const TimingStats& t) {
  if (t.status != "measured") return fmt::format("{}: {}", label, t.status);
  return fmt::format("{}: median {:.2f} us (p10 {:.2f}, p90 {:.2f}, spread {:.1f}%, {} samples, {})", label, t.median_us,
                     t.p10_us, t.p90_us, 100.0 * t.rel_spread, t.samples, t.method);
}
// Every baseline of the run, so a kernel is seen against each library path
// and not only the fastest one.
std::string baselines_line(const std::vector<BaselineResult>& baselines) {
  std::vector<std::string> parts;
  for (const auto& b : baselines) {
    if (!b.error.empty()) parts.push_back(fmt::format("{} failed", b.name));
    else if (b.cold.status == "measured") parts.push_back(fmt::format("{} {:.2f} us", b.name, b.cold.median_us));
  }
  return "baselines, cold median: " + fmt::format("{}", fmt::join(parts, ", "));
}
}  // namespace

std::string summarise_result(const EvalResult& r) {
  if (r.status == Status::ok)
    return fmt::format("ok, {:.2f} us, {:.3f}x vs {} ({:.0f} TFLOP/s)", r.cold.median_us, r.speedup,
                       r.best_baseline.empty() ? "baseline" : r.best_baseline, r.tflops);
  std::string reason = r.reason.empty() ? r.verify.failure : r.reason;
  if (reason.size() > kMaxReasonChars) reason = reason.substr(0, kMaxReasonChars) + "...";
  for (char& ch : reason)
    if (ch == '\n') ch = ' ';
  return fmt::format("{}: {}", to_string(r.status), reason);
}

std::string describe_result(const EvalResult& r, std::size_t max_log_chars) {
  std::string out = fmt::format("- status: {}{}\n", to_string(r.status), r.reason.empty() ? "" : " (" + r.reason + ")");
  if (!r.compile.compiler.empty())
    out += fmt::format("- compiled by {} for {} in {:.0f} ms\n", r.compile.compiler, r.compile.arch, r.compile.ms);
  if (!r.compile.log.empty()) out += "- compiler log:\n```\n" + trim_log(r.compile.log, max_log_chars) + "\n```\n";
  const auto& res = r.resources;
  std::vector<std::string> parts;  // -1 means "not reported"; leave those out
  if (res.registers >= 0) parts.push_back(fmt::format("{} registers/thread", res.registers));
  if (res.static_smem_bytes >= 0) parts.push_back(fmt::format("{} B static shared memory", res.static_smem_bytes));
  if (res.dynamic_smem_bytes >= 0) parts.push_back(fmt::format("{} B dynamic shared memory", res.dynamic_smem_bytes));
  if (res.local_bytes >= 0) parts.push_back(fmt::format("{} B local memory", res.local_bytes));
  if (res.spill_stores >= 0 || res.spill_loads >= 0)
    parts.push_back(fmt::format("spills {} B stores / {} B loads", std::max(0, res.spill_stores), std::max(0, res.spill_loads)));
  if (!parts.empty()) out += fmt::format("- resources: {}\n", fmt::join(parts, ", "));
  if (r.verify.status != "skipped") {
    out += fmt::format("- verification: {} ({}/{} trials passed, worst relative L2 error {:.2e})\n", r.verify.status,
                       r.verify.trials_passed, r.verify.trials, r.verify.rel_l2_err);
    if (!r.verify.failure.empty()) out += "  first failure: " + r.verify.failure + "\n";
  }
  if (r.cold.status != "skipped") out += "- " + timing_line("kernel time, cold L2", r.cold) + "\n";
  if (r.hot.status != "skipped") out += "- " + timing_line("kernel time, warm L2", r.hot) + "\n";
  if (r.best_baseline_us > 0)
    out += fmt::format("- best baseline {}: {:.2f} us; speedup {:.3f}x (>1 is faster than the baseline)\n", r.best_baseline,
                       r.best_baseline_us, r.speedup);
  if (r.baselines.size() > 1) out += "- " + baselines_line(r.baselines) + "\n";
  if (r.tflops > 0) out += fmt::format("- {:.1f} TFLOP/s = {:.1f}% of the measured peak\n", r.tflops, 100.0 * r.peak_fraction);
  if (!r.counters.empty()) {
    const auto reading = read_bottleneck(r.counters);
    if (!reading.figures.empty()) {
      std::string figs;
      for (const auto& [k, v] : reading.figures.items()) figs += fmt::format("{}{} {:.0f}", figs.empty() ? "" : ", ", k, v.get<double>());
      out += "- counters: " + figs + "\n";
    }
    out += "- bottleneck reading: " + reading.summary + "\n";
  }
  return out;
}

}  // namespace tessera::agent
