// tessera doctor: what this machine has, what is missing, and how to fix it.
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cupti.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "cli/command.hpp"
#include "harness/compiler.hpp"
#include "confine/confine.hpp"
#include "core/fs.hpp"
#include "bench/device.hpp"
#include "harness/sandbox.hpp"
#include "tile/learned_model.hpp"

namespace {

struct Report {
  std::vector<std::pair<std::string, std::string>> rows;
  std::vector<std::string> problems;
  std::vector<std::string> warnings;  // printed, but the machine still works
  nlohmann::json protections;
  void row(std::string k, std::string v) { rows.emplace_back(std::move(k), std::move(v)); }
  void problem(std::string what, std::string fix) { problems.push_back(fmt::format("{}\n      fix: {}", what, fix)); }
  void warning(std::string what, std::string fix) { warnings.push_back(fmt::format("{}\n      fix: {}", what, fix)); }
};

std::string on_off(bool on, const std::string& what) { return on ? "on (" + what + ")" : "OFF"; }

// What a candidate's processes are confined by here: measured, by a child
// that takes the runner's policy and tries what a hostile candidate would.
void confinement_rows(Report& r) {
  const tessera::ProbeResult p = tessera::probe_protections();
  r.protections = p;
  if (!p.error.empty()) {
    r.row("confinement", "unknown: " + p.error);
    r.warning("the confinement probe failed: " + p.error, "run tessera doctor again; report it if it persists");
    return;
  }
  const auto& rep = p.report;
  r.row("seccomp", on_off(rep.seccomp && p.socket_blocked && p.fork_blocked && p.signal_parent_blocked,
                          "candidates cannot open sockets, start processes, ptrace or signal other processes"));
  r.row("Landlock", rep.landlock ? fmt::format("on, ABI {} (candidates write only to their scratch directory{})",
                                               rep.landlock_abi, p.write_outside_blocked ? "" : ": NOT enforced")
                                 : fmt::format("OFF (kernel ABI {})", rep.landlock_abi));
  r.row("rlimits", on_off(rep.rlimits, fmt::format("file size {} MiB (worker {} MiB), open files, processes, no core files",
                                                   tessera::kRunnerMaxFileBytes >> 20, tessera::kWorkerMaxFileBytes >> 20)));
  r.row("own session", rep.own_session ? "yes (a worker and its children are killed as one group)" : "NO");
  r.row("GPU isolation", "each worker sees only its GPU (CUDA_VISIBLE_DEVICES set per worker)");
  std::vector<std::string> dropped;
  for (const auto& entry : tessera::current_environment()) {
    const auto name = entry.substr(0, entry.find('='));
    if (tessera::is_secret_name(name)) dropped.push_back(name);
  }
  r.row("environment", dropped.empty() ? "allow-listed for candidates"
                                       : fmt::format("allow-listed for candidates; kept from them: {}", fmt::join(dropped, ", ")));
  if (!rep.notes.empty()) r.row("confinement notes", rep.notes);
  const std::string fix = "use Linux 5.13+ with seccomp and Landlock enabled (CONFIG_SECURITY_LANDLOCK, lsm=...,landlock)";
  if (!rep.seccomp || !rep.landlock)
    r.warning("candidate processes are not fully confined on this machine (" + rep.notes + ")",
              tessera::confinement_disabled_reason().empty() ? fix : "unset TESSERA_CONFINE");
}

std::string version_string(int v) { return fmt::format("{}.{}", v / 1000, (v % 1000) / 10); }

// The GPU's name, empty when there is none.
std::string gpu_rows(Report& r) {
  std::string why;
  if (!tessera::gpu_present(&why)) {
    r.row("GPU", "none (" + why + ")");
    r.problem("no CUDA GPU is visible: evaluations run in compile-only mode (not verified, not timed)",
              "run on a machine with an NVIDIA GPU and driver; check nvidia-smi and CUDA_VISIBLE_DEVICES");
    return {};
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
  const std::string counters = tessera::bench::counters_unreadable_reason();
  r.row("CUPTI counters", counters.empty() ? "readable" : "NOT readable: " + counters);
  if (!counters.empty())
    r.problem("hardware counters cannot be read (results will carry counters.error)",
              "allow profiling: load nvidia with NVreg_RestrictProfilingToAdminUsers=0 or run as root");
  return p.name;
}

// Which learned cost model ranks this GPU's tunes and searches, or, without
// a GPU, which are stored. A build without XGBoost ranks by the analytical
// model alone, far worse (docs/tile.md), and says so nowhere else.
void cost_model_row(Report& r, const std::string& gpu_name) {
  namespace tile = tessera::tile;
  if (!tile::LearnedModel::available()) {
    r.row("cost model", "analytical only (built without XGBoost)");
    r.problem("built without XGBoost: tunes and searches rank configs by the analytical cost model alone",
              "install libxgboost-dev (on a machine without a package manager: scripts/carry_xgboost.sh) and build again");
    return;
  }
  if (gpu_name.empty()) {
    std::vector<std::string> files;
    for (const auto& p : tile::stored_models()) files.push_back(p.string());
    r.row("cost models", files.empty() ? "none stored (tunes rank by the analytical model)"
                                       : fmt::format("{} (each GPU kind uses its own, else all.json)", fmt::join(files, ", ")));
    return;
  }
  const std::string kind = tile::device_kind(gpu_name);
  const auto path = tile::device_model_path(kind);
  const tile::LearnedModel m = tile::model_for_device(kind);  // warns itself when a file cannot be read
  if (m.empty()) {
    r.row("cost model", fmt::format("analytical: no learned model for {} ({})", kind, path.empty() ? "none stored" : "unreadable: " + path.string()));
    r.warning(fmt::format("no learned cost model ranks this {}'s tunes: the analytical model does, far worse", kind),
              "tessera tile model train RUN... on sweeps of this GPU (docs/tile.md)");
    return;
  }
  r.row("cost model", fmt::format("{} for this {} ({})", m.describe(), kind,
                                  path.empty() ? "another kind's, as a prior" : path.string()));
}

// `--measure-peak`: the device's ceiling (cuBLAS peak over large squares,
// DRAM bandwidth, an empty kernel's time) measured again by a sandbox worker
// and stored for this GPU; every later evaluation's plausibility gate and
// peak_fraction use it (docs/harness.md, "Ceiling").
void ceiling_rows(Report& r) {
  tessera::SandboxOptions o;
  o.mode = tessera::EvalMode::full;
  o.remeasure_ceiling = true;
  auto ev = tessera::make_evaluator(o);
  ev->start();
  const tessera::DeviceSummary d = ev->device();
  if (d.peak_tflops <= 0) {
    r.problem("the ceiling could not be measured (see the worker log under " + tessera::cache_dir().string() + "/logs)",
              "run tessera doctor --measure-peak again on an idle GPU");
    return;
  }
  r.row("ceiling", fmt::format("peak {:.0f} TFLOP/s ({}), DRAM {:.0f} GB/s, floor {:.2f} us: measured now, stored",
                               d.peak_tflops, d.peak_source, d.dram_gbps, d.floor_us));
}

void setup(CLI::App& root) {
  auto* cmd = root.add_subcommand("doctor", "Report GPU, driver, toolkit versions, sandbox protections and what is missing");
  static bool json = false;
  cmd->add_flag("--json", json, "Print one JSON object instead of the table");
  static bool measure_peak = false;
  cmd->add_flag("--measure-peak", measure_peak,
                "Measure the GPU's ceiling again (peak, bandwidth, floor; about a minute) and store it");
  cmd->callback([] {
    Report r;
    confinement_rows(r);  // first: its child is forked before CUDA starts threads
    const std::string gpu_name = gpu_rows(r);
    if (measure_peak && !gpu_name.empty()) ceiling_rows(r);
    cost_model_row(r, gpu_name);
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
    if (!r.problems.empty()) tessera::cli::set_exit_code(1);
    if (json) {
      nlohmann::json rows = nlohmann::json::object();
      for (auto& [k, v] : r.rows) rows[k] = v;
      fmt::print("{}\n", nlohmann::json{{"rows", rows}, {"protections", r.protections}, {"problems", r.problems},
                                        {"warnings", r.warnings}}.dump(2));
      return;
    }
    for (auto& [k, v] : r.rows) fmt::print("{:<18} {}\n", k, v);
    for (auto& w : r.warnings) fmt::print("\nwarning: {}\n", w);
    if (r.problems.empty()) {
      fmt::print("\nall checks passed\n");
    } else {
      fmt::print("\n{} problem(s):\n", r.problems.size());
      for (auto& p : r.problems) fmt::print("  - {}\n", p);
    }
  });
}

}  // namespace

TESSERA_COMMAND(10, setup);
