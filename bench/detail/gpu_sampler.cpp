#include "bench/detail/gpu_sampler.hpp"

#include <algorithm>

namespace tessera::bench::detail {

namespace {

// Mean and extreme of one figure over the readings that have it.
struct Summary {
  double mean = 0, min = 0, max = 0;
};

template <class Get>
Summary summary_of(const std::vector<NvmlReading>& readings, Get get) {
  Summary s;
  int n = 0;
  for (const auto& r : readings) {
    const double v = get(r);
    if (v < 0) continue;
    s.min = n ? std::min(s.min, v) : v;
    s.max = n ? std::max(s.max, v) : v;
    s.mean += v;
    ++n;
  }
  if (n) s.mean /= n;
  return s;
}

}  // namespace

GpuFigures summarise(int device, const std::string& name, const std::vector<NvmlReading>& readings) {
  GpuFigures g;
  g.device = device;
  g.name = name;
  g.samples = int(readings.size());
  const auto sm = summary_of(readings, [](const NvmlReading& r) { return r.sm_clock_mhz; });
  g.sm_clock_mhz = sm.mean;
  g.sm_clock_min_mhz = sm.min;
  g.mem_clock_mhz = summary_of(readings, [](const NvmlReading& r) { return r.mem_clock_mhz; }).mean;
  const auto power = summary_of(readings, [](const NvmlReading& r) { return r.power_w; });
  g.power_w = power.mean;
  g.power_max_w = power.max;
  g.power_limit_w = summary_of(readings, [](const NvmlReading& r) { return r.power_limit_w; }).max;
  const auto temp = summary_of(readings, [](const NvmlReading& r) { return r.temperature_c; });
  g.temperature_c = temp.mean;
  g.temperature_max_c = temp.max;
  g.util_gpu_pct = summary_of(readings, [](const NvmlReading& r) { return r.util_gpu_pct; }).mean;
  g.util_mem_pct = summary_of(readings, [](const NvmlReading& r) { return r.util_mem_pct; }).mean;
  int known = 0;
  for (const auto& r : readings) {
    if (!r.reasons_known) continue;
    ++known;
    for (const auto& reason : throttle_reason_names(r.reasons)) g.throttle[reason] += 1;
  }
  for (auto& [reason, count] : g.throttle) count /= known;
  return g;
}

GpuSampler::GpuSampler(std::vector<int> devices, double period_s, const std::string& library)
    : nvml_(library), period_(period_s) {
  for (int d : devices) {
    Tracked t{d, nullptr, {}, {}, {}};
    if (nvml_.available()) {
      t.handle = nvml_.device_of_cuda_ordinal(d, &t.problem);
      if (t.handle) t.name = nvml_.name(t.handle);
    } else {
      t.problem = nvml_.problem();
    }
    tracked_.push_back(std::move(t));
  }
  const bool any = std::any_of(tracked_.begin(), tracked_.end(), [](const Tracked& t) { return t.handle; });
  if (any) thread_ = std::thread([this] { loop(); });
}

GpuSampler::~GpuSampler() { stop(); }

void GpuSampler::stop() {
  {
    std::lock_guard g(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void GpuSampler::loop() {
  std::unique_lock lk(mu_);
  while (!stopping_) {
    lk.unlock();
    for (auto& t : tracked_)
      if (t.handle) t.readings.push_back(nvml_.read(t.handle));
    lk.lock();
    cv_.wait_for(lk, period_, [this] { return stopping_; });
  }
}

std::vector<GpuFigures> GpuSampler::finish() {
  stop();
  std::vector<GpuFigures> out;
  for (const auto& t : tracked_) {
    GpuFigures g = summarise(t.device, t.name, t.readings);
    g.problem = t.problem;
    out.push_back(std::move(g));
  }
  return out;
}

}  // namespace tessera::bench::detail
