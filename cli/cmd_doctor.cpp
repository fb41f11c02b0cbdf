// tessera doctor: what this machine has, what is missing, and how to fix it.
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cupti.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cli/command.hpp"
#include "harness/compiler.hpp"
#include "harness/core/fs.hpp"
#include "harness/gpu/counters.hpp"
#include "harness/sandbox.hpp"

namespace {

struct Report {
  std::vector<std::pair<std::string, std::string>> rows;
  std::vector<std::string> problems;
  void row(std::string k, std::string v) { rows.emplace_back(std::move(k), std::move(v)); }
  void problem(std::string what, std::string fix) { problems.push_back(fmt::format("{}\n      fix: {}", what, fix)); }
};

std::string version_string(int v) { return fmt::format("{}.{}", v / 1000, (v % 1000) / 10); }

void gpu_rows(Report& r) {
  std::string why;
  if (!tessera::gpu_present(&why)) {
    r.row("GPU", "none (" + why + ")");
    r.problem("no CUDA GPU is visible: evaluations run in compile-only mode (not verified, not timed)",
              "run on a machine with an NVIDIA GPU and driver; check nvidia-smi and CUDA_VISIBLE_DEVICES");
    return;
  }
  int dev = 0, drv = 0, rt = 0;
  cudaGetDevice(&dev);
  cudaDriverGetVersion(&drv);
  cudaRuntimeGetVersion(&rt);
  cudaDeviceProp p{};
  cudaGetDeviceProperties(&p, dev);
  int clock_khz = 0, mem_khz = 0;
  cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, dev);
  cudaDeviceGetAttribute(&mem_khz, cudaDevAttrMemoryClockRate, dev);
  r.row("GPU", fmt::format("{} (sm_{}{}), {} SMs", p.name, p.major, p.minor, p.multiProcessorCount));
  r.row("memory", fmt::format("{:.1f} GiB, L2 {:.1f} MiB, smem/block opt-in {} KiB",
                              double(p.totalGlobalMem) / (1 << 30), double(p.l2CacheSize) / (1 << 20),
                              p.sharedMemPerBlockOptin / 1024));
  r.row("clocks", fmt::format("SM max {} MHz, memory {} MHz", clock_khz / 1000, mem_khz / 1000));
  r.row("driver / runtime", fmt::format("CUDA driver {} / runtime {}", version_string(drv), version_string(rt)));
  if (drv < rt)
    r.problem(fmt::format("the driver (CUDA {}) is older than the runtime (CUDA {})", version_string(drv), version_string(rt)),
              "update the NVIDIA driver, or build tessera with a toolkit no newer than the driver");
  if (p.major < 8) r.problem("tessera targets sm_80 and newer", "use an Ampere or Hopper GPU");
  const std::string counters = tessera::gpu::probe_counters();
  r.row("CUPTI counters", counters.empty() ? "readable" : "NOT readable: " + counters);
  if (!counters.empty())
    r.problem("hardware counters cannot be read (results will carry counters.error)",
              "allow profiling: load nvidia with NVreg_RestrictProfilingToAdminUsers=0 or run as root");
}

void setup(CLI::App& root) {
  auto* cmd = root.add_subcommand("doctor", "Report GPU, driver, toolkit versions and what is missing");
  cmd->callback([] {
    Report r;
    gpu_rows(r);
    r.row("NVRTC", tessera::nvrtc_version());
    uint32_t cupti = 0;
    cuptiGetVersion(&cupti);
    r.row("CUPTI API", std::to_string(cupti));
    int cublas = 0;
    cublasGetProperty(MAJOR_VERSION, &cublas);
    int cublas_minor = 0;
    cublasGetProperty(MINOR_VERSION, &cublas_minor);
    r.row("cuBLAS", fmt::format("{}.{}", cublas, cublas_minor));
    const char* nvcc = std::getenv("TESSERA_NVCC");
    std::filesystem::path nvcc_path = nvcc && *nvcc ? nvcc : TESSERA_NVCC_PATH;
    std::error_code ec;
    r.row("nvcc", std::filesystem::exists(nvcc_path, ec) ? nvcc_path.string() : "missing (" + nvcc_path.string() + ")");
    if (!std::filesystem::exists(nvcc_path, ec))
      r.problem("nvcc not found: translation-unit candidates cannot be compiled",
                "install the CUDA toolkit or set TESSERA_NVCC=/path/to/nvcc");
    const auto cache = tessera::cache_dir();
    std::filesystem::create_directories(cache, ec);
    const bool writable = !ec && ::access(cache.c_str(), W_OK) == 0;
    r.row("cache", cache.string() + (writable ? "" : " (NOT writable)"));
    if (!writable) r.problem("the cache directory is not writable", "set TESSERA_CACHE_DIR to a writable directory");
    for (auto& [k, v] : r.rows) fmt::print("{:<18} {}\n", k, v);
    if (r.problems.empty()) {
      fmt::print("\nall checks passed\n");
    } else {
      fmt::print("\n{} problem(s):\n", r.problems.size());
      for (auto& p : r.problems) fmt::print("  - {}\n", p);
      tessera::cli::set_exit_code(1);
    }
  });
}

}  // namespace

TESSERA_COMMAND(10, setup);
