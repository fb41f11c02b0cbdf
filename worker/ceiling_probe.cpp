#include "worker/ceiling_probe.hpp"

#include <chrono>

#include <fmt/format.h>

#include "worker/baselines/baselines.hpp"
#include "worker/check.hpp"
#include "worker/floor.hpp"
#include "worker/handles.hpp"
#include "worker/verify_kernels.hpp"

namespace tessera::worker {

namespace {

// Large squares: 4096^3 reaches cuBLAS's best rate before the power cap,
// 8192^3 and up run into it; the best of all is the peak.
constexpr int kPeakDims[] = {4096, 8192, 16384};
constexpr double kWarmupSeconds = 0.5;            // clocks ramp up before the first sample counts
constexpr std::size_t kCopyBytes = std::size_t(2) << 30;  // far beyond L2: every byte comes from DRAM

// Runs `launch` back to back for about `seconds`, so the clocks are up.
void warm_up(const LaunchFn& launch, cudaStream_t s, double seconds) {
  const auto t0 = std::chrono::steady_clock::now();
  while (std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() < seconds) {
    for (int i = 0; i < 8; ++i) launch(s);
    TESSERA_CUDA_CHECK(cudaStreamSynchronize(s));
  }
}

void measure_peak(Timer& timer, cudaStream_t s, DeviceCeiling& out) {
  double best = 0;
  std::string source;
  for (int dim : kPeakDims) {
    Task t;
    t.m = t.n = t.k = dim;
    const std::size_t elems = std::size_t(dim) * dim;
    DeviceBuffer A(elems * 2), B(elems * 2), C(elems * 2);
    fill_random(A.as<__half>(), elems, Distribution::uniform_sym, 1, s);
    fill_random(B.as<__half>(), elems, Distribution::uniform_sym, 2, s);
    auto ops = baselines::operands_for(t, A.as<const __half>(), B.as<const __half>(), C.as<__half>(), nullptr);
    baselines::SuiteOptions so;
    so.autotune_max_algos = 4;
    baselines::BaselineSuite suite(t, ops, s, so);
    suite.prepare(timer);
    std::vector<LaunchFn> fns;
    std::vector<std::string> names;
    for (const auto& bl : suite.baselines())
      if (bl.runnable()) {
        fns.push_back(bl.launch);
        names.push_back(bl.name);
      }
    for (const auto& f : fns) warm_up(f, s, kWarmupSeconds / double(fns.size()));
    const auto stats = timer.cold_interleaved(fns);
    for (std::size_t i = 0; i < stats.size(); ++i) {
      if (stats[i].samples == 0) continue;
      const double tflops = t.flops() / (stats[i].median_us * 1e-6) / 1e12;
      if (tflops > best) {
        best = tflops;
        source = fmt::format("{} at {}^3 TN fp16 (fp32 acc), cold, after a warm-up: the best cuBLAS/cuBLASLt over "
                             "4096^3, 8192^3 and 16384^3", names[i], dim);
      }
    }
  }
  out.peak_tflops = best;
  out.peak_source = source;
}

}  // namespace

DeviceCeiling measure_ceiling(Timer& timer, cudaStream_t s, int sm_count) {
  DeviceCeiling out;
  {
    DeviceBuffer in(kCopyBytes / 2), dst(kCopyBytes / 2);
    fill_bytes(in.get(), in.bytes(), 1, s);
    auto copy = [&](cudaStream_t st) { TESSERA_CUDA_CHECK(launch_floor_copy(in.get(), dst.get(), in.bytes(), sm_count, st)); };
    warm_up(copy, s, kWarmupSeconds);
    const TimingStats t = timer.cold(copy);
    out.dram_gbps = t.median_us > 0 ? double(kCopyBytes) / (t.median_us * 1e-6) / 1e9 : 0.0;
  }
  {
    auto empty = [](cudaStream_t st) { TESSERA_CUDA_CHECK(launch_floor_empty(1, 128, 0, st)); };
    out.floor_us = timer.cold(empty).median_us;
  }
  measure_peak(timer, s, out);
  return out;
}

}  // namespace tessera::worker
