#pragma once
// cuBLAS / cuBLASLt baselines (docs/baselines.md). They run inside the sandbox
// worker next to the candidate and go through the same worker::Timer, so a
// speedup is always a ratio of two times measured in one run.
#include <cublas_api.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/result.hpp"
#include "core/task.hpp"
#include "core/wire.hpp"
#include "worker/timing.hpp"

namespace tessera::baselines {

inline constexpr std::size_t kDefaultWorkspaceBytes = std::size_t{32} << 20;  // 32 MiB, cuBLASLt and cuBLAS each
using ::tessera::kDefaultAutotuneMaxAlgos;  // heuristic algorithms timed (core/wire.hpp: SandboxOptions' default too)

// Names as they appear in results.
inline constexpr const char* kCublasTN = "cublas_tn";
inline constexpr const char* kCublasNN = "cublas_nn";
inline constexpr const char* kCublasLtHeuristic = "cublaslt_heuristic";
inline constexpr const char* kCublasLtAutotuned = "cublaslt_autotuned";
inline constexpr const char* kNoFusedEpilogue = "no fused epilogue";

// Device operands in the task's row-major convention (core/task.hpp).
// B is in the task's layout; bias (length N) is used only by epilogue tasks.
struct GemmOperands {
  const __half* A = nullptr;
  const __half* B = nullptr;
  __half* C = nullptr;
  const __half* bias = nullptr;
  int M = 0, N = 0, K = 0;
  Layout layout = Layout::TN;
  Epilogue epilogue = Epilogue::none;
};

GemmOperands operands_for(const Task& task, const __half* A, const __half* B, __half* C, const __half* bias);

// cuBLAS is column-major: the row-major C = A·op(B) is computed as the
// column-major C^T = op(B)·A^T with m = N, n = M, k = K. "a" is what cuBLAS
// calls A (the task's B), "b" is the task's A. Pure; unit-tested.
struct GemmArgs {
  cublasOperation_t transa = CUBLAS_OP_N, transb = CUBLAS_OP_N;
  int m = 0, n = 0, k = 0;
  int lda = 0, ldb = 0, ldc = 0;
  // Stored (column-major) shapes of cuBLAS's A, B and C, as cuBLASLt layouts need them.
  int a_rows = 0, a_cols = 0, b_rows = 0, b_cols = 0, c_rows = 0, c_cols = 0;
};
GemmArgs gemm_args(Layout layout, int M, int N, int K);
inline GemmArgs gemm_args(const Task& t) { return gemm_args(t.layout, int(t.m), int(t.n), int(t.k)); }

struct SuiteOptions {
  int autotune_max_algos = kDefaultAutotuneMaxAlgos;
  std::size_t workspace_bytes = kDefaultWorkspaceBytes;
  std::filesystem::path cache_dir;  // empty: tessera::cache_dir() / "baselines"
  bool remeasure = false;           // ignore the cached autotune choice (it is rewritten)
  bool use_cache = true;            // false: neither read nor write the cache
};

// One runnable baseline. error non-empty => not runnable (launch is empty).
struct Baseline {
  std::string name;
  std::string algo;  // human description of the algorithm used
  worker::LaunchFn launch;
  std::string error;
  bool runnable() const { return error.empty() && static_cast<bool>(launch); }
};

// The algorithms an autotune report (BaselineSuite::autotune_report) tried,
// in its order: each one's cold median, or why it was not timed. Pure.
std::vector<AutotuneTrial> autotune_trials(const nlohmann::json& report);

// Owns the cuBLAS and cuBLASLt handles, workspaces, Lt descriptors and the
// copy of B in the other layout. The operands must outlive the suite.
class BaselineSuite {
public:
  BaselineSuite(const Task& task, const GemmOperands& ops, cudaStream_t stream, SuiteOptions options = {});
  ~BaselineSuite();
  BaselineSuite(const BaselineSuite&) = delete;
  BaselineSuite& operator=(const BaselineSuite&) = delete;

  // Autotunes cublaslt_autotuned (or loads the cached choice, checked with
  // cublasLtMatmulAlgoCheck): every algorithm of the heuristic's list timed
  // interleaved under a loose rule, then the fastest three again, interleaved,
  // under the timer's own options; the fastest of those wins. Before this call the
  // autotuned baseline is not runnable. Throws tessera::Error only for
  // tessera bugs or a broken GPU context.
  void prepare(worker::Timer& timer);

  const std::vector<Baseline>& baselines() const;
  const Baseline* find(const std::string& name) const;

  // Re-derives the copy of B in the other layout; call after B's contents change.
  void refresh_inputs();

  // What prepare() did: {"from_cache": bool, "tried": [{"index", "algo", "median_us", "status",
  // "final_us" (finalists), "error"}], "chosen": index, "median_us": the winner's final median}.
  const nlohmann::json& autotune_report() const;
  // Sets the cublaslt_autotuned result's `autotune` to the algorithms the
  // autotune tried (autotune_trials of the report; none for a cached choice).
  void describe_autotune(std::vector<BaselineResult>& results) const;
  // Cold medians from the previous run (display only, never used in a ratio).
  nlohmann::json previous_times_us() const;
  // Stores this run's cold medians next to the cached algorithm choice (not
  // under a profiler: its times are wrong, and so would the entry be).
  void record_times(const std::vector<BaselineResult>& results);

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tessera::baselines
