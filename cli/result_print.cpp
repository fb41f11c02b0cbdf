#include "cli/result_print.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/counter_set.hpp"

namespace tessera::cli {

namespace {

std::string timing_line(const TimingStats& t) {
  if (t.status != "measured") return t.status;
  return fmt::format("{:.2f} us median of {} (p10-p90 spread {:.1f}%, {}{}, {} throttled discarded)", t.median_us,
                     t.samples, 100.0 * t.rel_spread, t.method, t.converged ? "" : ", NOT converged",
                     t.discarded_throttled);
}

std::string bytes(int b) {
  if (b < 0) return "?";
  if (b >= 1024) return fmt::format("{:.1f} KiB", b / 1024.0);
  return fmt::format("{} B", b);
}

}  // namespace

std::string format_result(const EvalResult& r) {
  std::string s;
  auto row = [&](const char* k, const std::string& v) { s += fmt::format("  {:<11} {}\n", k, v); };
  row("candidate", fmt::format("{} ({}, {})", r.candidate_name, r.candidate_kind, r.candidate_hash.substr(0, 12)));
  row("task", fmt::format("{} {} {} epilogue={}", r.task.op, r.task.shape(), to_string(r.task.layout),
                          to_string(r.task.epilogue)));
  row("status", to_string(r.status) + (r.reason.empty() ? "" : ": " + r.reason));
  if (!r.compile.compiler.empty())
    row("compile", fmt::format("{} {} in {:.0f} ms{}{}", r.compile.compiler, r.compile.arch, r.compile.ms,
                               r.compile.cached ? " (cache hit)" : "",
                               r.compile.options.empty() ? "" : ", options " + fmt::format("{}", fmt::join(r.compile.options, " "))));
  if (r.resources.registers >= 0)
    row("resources", fmt::format("{} regs, smem {} static + {} dynamic, stack {}, spills {} st / {} ld",
                                 r.resources.registers, bytes(r.resources.static_smem_bytes),
                                 bytes(r.resources.dynamic_smem_bytes), bytes(r.resources.local_bytes),
                                 bytes(r.resources.spill_stores), bytes(r.resources.spill_loads)));
  if (r.verify.status != "skipped")
    row("verify", fmt::format("{} {}/{} trials, max abs err {:.3g}, rel L2 {:.3g}{}", r.verify.status,
                              r.verify.trials_passed, r.verify.trials, r.verify.max_abs_err, r.verify.rel_l2_err,
                              r.verify.failure.empty() ? "" : " -- " + r.verify.failure));
  else
    row("verify", "skipped (not verified)");
  row("cold", timing_line(r.cold));
  if (r.hot.status == "measured") row("hot", timing_line(r.hot));
  if (r.host_latency_us > 0) row("host", fmt::format("{:.2f} us per call, launch path included", r.host_latency_us));
  if (r.tflops > 0)
    row("TFLOP/s", fmt::format("{:.1f} ({:.1f}% of measured peak {:.0f})", r.tflops, 100.0 * r.peak_fraction,
                               r.device.peak_tflops));
  for (const auto& b : r.baselines) {
    if (!b.error.empty()) row("baseline", fmt::format("{:<20} n/a: {}", b.name, b.error));
    else
      row("baseline", fmt::format("{:<20} {:.2f} us  {:.1f} TFLOP/s  ({})", b.name, b.cold.median_us,
                                  r.task.tflops_at(b.cold.median_us), b.algo));
  }
  if (r.speedup > 0) row("speedup", fmt::format("{:.3f}x vs {} (cold, same run)", r.speedup, r.best_baseline));
  if (r.counters.contains("error")) row("counters", "unavailable: " + r.counters["error"].get<std::string>());
  else if (!r.counters.empty()) {
    auto pct = [&](const char* k) {
      return r.counters.contains(k) && r.counters[k].is_number() ? fmt::format("{:.0f}%", r.counters[k].get<double>())
                                                                 : std::string("?");
    };
    row("counters", fmt::format("SM {} DRAM {} tensor {} L2 hit {} occupancy {} -> {}", pct("sm_throughput_pct"),
                                pct("dram_throughput_pct"), pct("tensor_pipe_pct"), pct("l2_hit_rate_pct"),
                                pct("achieved_occupancy_pct"), bottleneck_hint(r.counters)));
  }
  if (!r.worker_log.empty() && r.status != Status::ok) {
    std::string tail = r.worker_log.size() > 600 ? r.worker_log.substr(r.worker_log.size() - 600) : r.worker_log;
    row("worker log", "...\n" + tail);
  }
  return s;
}

int exit_code_for(Status s) {
  if (s == Status::ok || s == Status::compiled) return 0;
  if (s == Status::infra_error) return 3;
  return 1;
}

}  // namespace tessera::cli
