// tessera bench floor: the floor of kernel GPU time under the measurement
// protocol (L2 flushed before every sample, CUPTI activity records, the same
// Timer as candidates and baselines). Kernels that do nothing, or one DRAM
// round trip per CTA, say how much of a 2-3 us small GEMM no tile can remove.
// A benchmark: it prints figures and asserts nothing.
#include "bench/floor.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "bench/device.hpp"
#include "core/result.hpp"
#include "worker/check.hpp"
#include "worker/floor.hpp"
#include "worker/handles.hpp"
#include "worker/timing.hpp"

namespace tessera::bench {

namespace {

struct Variant {
  std::string name;
  worker::LaunchFn launch;
};

}  // namespace

void run_bench_floor(const BenchFloorArgs& a) {
  const cudaDeviceProp prop = open_device(a.device);
  const int sms = prop.multiProcessorCount;
  // A big tile config's shared memory: the empty kernel asks for it, so a
  // change of the SM's shared-memory carve-out after the flush shows.
  const int big_smem = std::min<int>(static_cast<int>(prop.sharedMemPerBlockOptin), 200 * 1024);

  worker::Stream stream;
  worker::DeviceBuffer in(static_cast<std::size_t>(sms) * 128), out(static_cast<std::size_t>(sms) * 16);
  TESSERA_CUDA_CHECK(cudaMemsetAsync(in.get(), 0, in.bytes(), stream.get()));
  TESSERA_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
  TESSERA_CUDA_CHECK(worker::allow_floor_smem(big_smem));
  const auto empty = [](int ctas, int threads, int smem) {
    return [=](cudaStream_t s) { TESSERA_CUDA_CHECK(worker::launch_floor_empty(ctas, threads, smem, s)); };
  };
  const auto touch = [&](int ctas, int threads) {
    return [=, i = in.get(), o = out.get()](cudaStream_t s) {
      TESSERA_CUDA_CHECK(worker::launch_floor_touch(i, o, ctas, threads, s));
    };
  };
  const std::vector<Variant> variants = {
      {"empty, 1 CTA x 128", empty(1, 128, 0)},
      {fmt::format("empty, {} CTAs x 256", sms), empty(sms, 256, 0)},
      {fmt::format("empty, {} CTAs x 256, {} KiB smem", sms, big_smem / 1024), empty(sms, 256, big_smem)},
      {"one DRAM line, 1 CTA x 128", touch(1, 128)},
      {fmt::format("one DRAM line per CTA, {} CTAs x 256", sms), touch(sms, 256)},
  };
  std::vector<worker::LaunchFn> launches;
  for (const auto& v : variants) launches.push_back(v.launch);

  worker::Timer timer(stream.get(), worker::TimingOptions{});
  const auto cold = timer.cold_interleaved(launches);
  std::vector<TimingStats> hot;
  for (const auto& v : variants) hot.push_back(timer.hot(v.launch));

  if (a.json) {
    nlohmann::json rows = nlohmann::json::array();
    for (std::size_t i = 0; i < variants.size(); ++i)
      rows.push_back({{"variant", variants[i].name}, {"cold", nlohmann::json(cold[i])}, {"hot", nlohmann::json(hot[i])}});
    fmt::print("{}\n", nlohmann::json{{"device", prop.name}, {"sm_count", sms}, {"floor", rows}}.dump(2));
    return;
  }
  fmt::print("bench floor on {} ({} SMs): cold = L2 flushed before each sample ({}), hot = back to back ({})\n",
             prop.name, sms, cold.empty() ? "" : cold.front().method, hot.empty() ? "" : hot.front().method);
  fmt::print("{:<48}{:>10}{:>9}{:>9}{:>9}{:>10}\n", "kernel", "cold us", "p10", "p90", "samples", "hot us");
  for (std::size_t i = 0; i < variants.size(); ++i)
    fmt::print("{:<48}{:>10.2f}{:>9.2f}{:>9.2f}{:>9}{:>10.2f}\n", variants[i].name, cold[i].median_us, cold[i].p10_us,
               cold[i].p90_us, cold[i].samples, hot[i].median_us);
}

}  // namespace tessera::bench
