#include "bench/scale_report.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace tessera::bench {

TESSERA_JSON_STRUCT(StageFigures, stage, n, p50_ms, mean_ms, p90_ms)
TESSERA_JSON_STRUCT(GpuFigures, device, name, samples, sm_clock_mhz, sm_clock_min_mhz, mem_clock_mhz, power_w,
                    power_max_w, power_limit_w, temperature_c, temperature_max_c, util_gpu_pct, util_mem_pct, throttle,
                    busy, problem)
TESSERA_JSON_STRUCT(ColdTimingFigures, timed, samples, discarded_throttled, discarded_other, converged, rel_spread_p50,
                    elapsed_ms_p50, sm_clock_ghz)
TESSERA_JSON_STRUCT(ScalePoint, path, shape, gpus, devices, evals, wall_s, evals_per_min, scaling, linear_fraction,
                    statuses, compile_cache_hits, stages, cold, gpu, note)
TESSERA_JSON_STRUCT(ScaleReport, started_at, mode, cache, per_gpu, clients, counters, source, nvml, points)

namespace {

constexpr double kThrottleShown = 0.01;  // a reason held in under 1% of the readings is left out of the table

// The stages in the order an evaluation meets them; others (worker phases
// this list does not know yet) go after the worker's, by name.
const std::vector<std::string>& stage_order() {
  static const std::vector<std::string> order = {
      "client",  "total",  "serve_queue", "compile_ahead", "queue",    "wall",   "compile",
      "round_trip", "setup", "load",     "verify",        "baselines", "timing", "counters"};
  return order;
}

std::size_t rank_of(const std::string& stage) {
  const auto& o = stage_order();
  const auto it = std::find(o.begin(), o.end(), stage);
  return it == o.end() ? o.size() : std::size_t(it - o.begin());
}

std::string statuses_text(const std::map<std::string, int>& s) {
  std::string out;
  for (const auto& [k, v] : s) out += fmt::format("{}{} {}", out.empty() ? "" : ", ", k, v);
  return out;
}

std::string percent(double share) { return fmt::format("{:.0f}%", 100 * share); }

// Means over the GPUs that have the figure.
struct GpuMeans {
  double busy = -1, sm_mhz = -1, power_w = -1;
  std::map<std::string, double> throttle;
};

GpuMeans means_of(const std::vector<GpuFigures>& gpus) {
  GpuMeans m;
  double busy = 0, sm = 0, power = 0;
  int n_busy = 0, n_sampled = 0;
  for (const auto& g : gpus) {
    if (g.busy >= 0) busy += g.busy, ++n_busy;
    if (g.samples == 0) continue;
    sm += g.sm_clock_mhz;
    power += g.power_w;
    ++n_sampled;
    for (const auto& [reason, share] : g.throttle) m.throttle[reason] += share;
  }
  if (n_busy) m.busy = busy / n_busy;
  if (n_sampled) {
    m.sm_mhz = sm / n_sampled;
    m.power_w = power / n_sampled;
    for (auto& [reason, share] : m.throttle) share /= n_sampled;
  }
  return m;
}

std::string throttle_text(const std::map<std::string, double>& throttle) {
  std::string out;
  for (const auto& [reason, share] : throttle)
    if (share >= kThrottleShown) out += fmt::format("{}{} {}", out.empty() ? "" : ", ", reason, percent(share));
  return out.empty() ? "none" : out;
}

std::string figure(double v, const char* format) { return v < 0 ? "-" : fmt::format(fmt::runtime(format), v); }

}  // namespace

void fill_scaling(ScaleReport& report) {
  for (auto& p : report.points) {
    const ScalePoint* base = nullptr;
    for (const auto& q : report.points)
      if (q.path == p.path && q.shape == p.shape && q.evals_per_min > 0 && (!base || q.gpus < base->gpus)) base = &q;
    p.scaling = p.linear_fraction = 0;
    if (!base || p.evals_per_min <= 0) continue;
    p.scaling = p.evals_per_min / base->evals_per_min;
    p.linear_fraction = p.scaling / (double(p.gpus) / double(base->gpus));
  }
}

Table points_table(const ScaleReport& report) {
  Table t({"path", "shape", "GPUs", "evals", "wall s", "evals/min", "scaling", "of linear", "statuses", "cache hits",
           "busy", "SM MHz", "power W", "throttle"});
  for (const auto& p : report.points) {
    const GpuMeans m = means_of(p.gpu);
    t.add_row({p.path, p.shape, std::to_string(p.gpus), std::to_string(p.evals), fmt::format("{:.1f}", p.wall_s),
               fmt::format("{:.1f}", p.evals_per_min), p.scaling > 0 ? fmt::format("{:.2f}x", p.scaling) : "-",
               p.linear_fraction > 0 ? percent(p.linear_fraction) : "-", statuses_text(p.statuses),
               fmt::format("{}/{}", p.compile_cache_hits, p.evals), m.busy < 0 ? "-" : percent(m.busy),
               figure(m.sm_mhz, "{:.0f}"), figure(m.power_w, "{:.0f}"),
               m.sm_mhz < 0 ? "-" : throttle_text(m.throttle)});
  }
  return t;
}

Table stages_table(const ScaleReport& report) {
  std::vector<std::string> stages;
  for (const auto& p : report.points)
    for (const auto& s : p.stages)
      if (std::find(stages.begin(), stages.end(), s.stage) == stages.end()) stages.push_back(s.stage);
  std::stable_sort(stages.begin(), stages.end(), [](const std::string& a, const std::string& b) {
    return rank_of(a) != rank_of(b) ? rank_of(a) < rank_of(b) : a < b;
  });
  std::vector<std::string> headers = {"path", "shape", "GPUs"};
  for (const auto& s : stages) headers.push_back(s);
  Table t(headers);
  for (const auto& p : report.points) {
    std::vector<std::string> row = {p.path, p.shape, std::to_string(p.gpus)};
    for (const auto& s : stages) {
      const auto it = std::find_if(p.stages.begin(), p.stages.end(), [&](const StageFigures& f) { return f.stage == s; });
      row.push_back(it == p.stages.end() ? "" : fmt::format("{:.1f} ({:.1f})", it->p50_ms, it->mean_ms));
    }
    t.add_row(std::move(row));
  }
  return t;
}

Table cold_table(const ScaleReport& report) {
  Table t({"path", "shape", "GPUs", "timed", "samples", "throttled", "lost", "converged", "spread p50", "timer ms p50",
           "SM GHz (probe)"});
  for (const auto& p : report.points) {
    const ColdTimingFigures& c = p.cold;
    if (c.timed == 0) {
      t.add_row({p.path, p.shape, std::to_string(p.gpus), "0", "", "", "", "", "", "", ""});
      continue;
    }
    t.add_row({p.path, p.shape, std::to_string(p.gpus), std::to_string(c.timed), fmt::format("{:.0f}", c.samples),
               fmt::format("{:.1f}", c.discarded_throttled), fmt::format("{:.1f}", c.discarded_other), percent(c.converged),
               fmt::format("{:.2f}%", 100 * c.rel_spread_p50), fmt::format("{:.0f}", c.elapsed_ms_p50),
               fmt::format("{:.3f}", c.sm_clock_ghz)});
  }
  return t;
}

Table gpus_table(const ScaleReport& report) {
  Table t({"path", "shape", "GPUs", "device", "name", "samples", "SM MHz (min)", "mem MHz", "power W (max / limit)",
           "temp C (max)", "util %", "busy", "throttle"});
  for (const auto& p : report.points)
    for (const auto& g : p.gpu) {
      const std::string head = std::to_string(g.device);
      if (g.samples == 0) {
        // The run's NVML line says why at length; a GPU's own problem is its own.
        const bool run_wide = !report.nvml.empty() && g.problem == report.nvml;
        t.add_row({p.path, p.shape, std::to_string(p.gpus), head, g.name, "0", "", "", "", "", "",
                   g.busy < 0 ? "-" : percent(g.busy), run_wide ? "no readings (NVML, above)" : g.problem});
        continue;
      }
      t.add_row({p.path, p.shape, std::to_string(p.gpus), head, g.name, std::to_string(g.samples),
                 fmt::format("{:.0f} ({:.0f})", g.sm_clock_mhz, g.sm_clock_min_mhz), fmt::format("{:.0f}", g.mem_clock_mhz),
                 fmt::format("{:.0f} ({:.0f} / {:.0f})", g.power_w, g.power_max_w, g.power_limit_w),
                 fmt::format("{:.0f} ({:.0f})", g.temperature_c, g.temperature_max_c), fmt::format("{:.0f}", g.util_gpu_pct),
                 g.busy < 0 ? "-" : percent(g.busy), throttle_text(g.throttle)});
    }
  return t;
}

}  // namespace tessera::bench
