#include "bench/ceiling.hpp"

#include <fmt/format.h>

namespace tessera::bench {

std::optional<BaselinePeak> fastest_baseline(const ShapeRecord& r) {
  std::optional<BaselinePeak> best;
  for (const auto& b : r.baselines)
    if (auto us = baseline_us(r, b.name)) {
      const double tflops = r.task.tflops_at(*us);
      if (!best || tflops > best->tflops) best = BaselinePeak{b.name, r.task.shape(), tflops};
    }
  return best;
}

Ceiling resolve_ceiling(const std::vector<ShapeRecord>& records, double peak_override, double dram_override) {
  Ceiling c;
  std::optional<BaselinePeak> fastest;
  for (const auto& r : records) {
    if (auto f = fastest_baseline(r); f && (!fastest || f->tflops > fastest->tflops)) fastest = f;
    if (r.device.peak_tflops > c.peak_tflops) {
      c.peak_tflops = r.device.peak_tflops;
      c.peak_source = r.device.peak_source.empty() ? "stored with the results" : r.device.peak_source;
    }
    if (r.device.dram_gbps > c.dram_gbps) {
      c.dram_gbps = r.device.dram_gbps;
      c.dram_source = "stored with the results";
    }
  }
  // Only over a stored peak: without one, a sweep of small shapes would make
  // its own fastest baseline "100%".
  if (c.has_peak() && fastest && fastest->tflops > c.peak_tflops) {
    c.peak_source = fmt::format("{} at {}, cold, in this sweep: above the stored peak of {:.0f} TFLOP/s",
                                fastest->who, fastest->shape, c.peak_tflops);
    c.peak_tflops = fastest->tflops;
  }
  if (peak_override > 0) c = {peak_override, "given on the command line (--peak-tflops)", c.dram_gbps, c.dram_source};
  if (dram_override > 0) {
    c.dram_gbps = dram_override;
    c.dram_source = "given on the command line (--dram-gbps)";
  }
  return c;
}

std::vector<AbovePeak> above_peak(const std::vector<ShapeRecord>& records, const Ceiling& ceiling) {
  std::vector<AbovePeak> out;
  if (!ceiling.has_peak()) return out;
  for (const auto& r : records) {
    auto check = [&](const std::string& who, double us) {
      const double tflops = r.task.tflops_at(us);
      if (tflops > ceiling.peak_tflops) out.push_back({r.task.shape(), who, tflops});
    };
    if (auto us = kernel_us(r)) check("kernel " + r.kernel->name, *us);
    for (const auto& b : r.baselines)
      if (auto us = baseline_us(r, b.name)) check(b.name, *us);
  }
  return out;
}

double percent_of_peak(double tflops, const Ceiling& ceiling) {
  return ceiling.has_peak() ? 100.0 * tflops / ceiling.peak_tflops : 0.0;
}

}  // namespace tessera::bench
