#pragma once
// The messages that cross a process or language boundary, each a struct with
// its defaults written once (core/json_struct.hpp). Both ends of every seam
// use the same struct, and read it strictly: an unknown key or a value of the
// wrong type is bad_input naming the key.
//
//   SandboxOptions      command lines, Python's Pool(...)           -> the sandbox (harness/sandbox.hpp)
//   EvalOptions         command lines, Python, HTTP "options",
//                       EnvConfig "eval"                            -> an evaluator (harness/evaluator.hpp)
//   WorkerCommand,
//   WorkerEvalRequest   the sandbox                                 -> `tessera __worker`, one JSON line each
//   DeviceCeiling       the worker's "ceiling" answer, the eval request, the per-GPU store (core/ceiling.hpp)
//   CompileRequest,
//   CompileChildRequest the compiler                                -> `tessera __compile` (its answer:
//                                                                      CompileOutput, harness/compiler.hpp),
//                                                                      or a compile server, `tessera __compile
//                                                                      --serve`: one request line after
//                                                                      another, each answered by one
//                                                                      {"TESSERA_COMPILE": CompileOutput} line
//                                                                      (harness/detail/compile_servers.hpp)
//   the TU runner's messages: core/wire_runner.hpp
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/candidate.hpp"
#include "core/json_struct.hpp"
#include "core/result.hpp"
#include "core/task.hpp"

namespace tessera {

// ---- Modes ------------------------------------------------------------------

// auto: full where a GPU is visible, else compile_only. full: compiled,
// verified and timed (no GPU is an error). compile_only: compiled and
// statically checked, never verified or timed.
enum class EvalMode { auto_detect, full, compile_only };
std::string to_string(EvalMode m);                 // "auto" | "full" | "compile_only"
EvalMode parse_eval_mode(std::string_view name);   // bad_input: "unknown evaluation mode '...'"
void to_json(nlohmann::json& j, EvalMode m);
void from_json(const nlohmann::json& j, EvalMode& m);

// ---- Evaluation options -----------------------------------------------------

inline constexpr int kDefaultVerifyTrials = 4;  // random trials, plus one integer-exact trial
inline constexpr int kMaxVerifyTrials = 64;     // each trial is a GEMM and its reference: a bound for bad options
inline constexpr const char* kDefaultCounterSet = "full";
inline constexpr const char* kDefaultRankBy = "cold";

struct EvalOptions {
  bool compile_only = false;   // no GPU: compile + static checks, verify/timing reported as skipped
  bool counters = true;        // collect CUPTI counters (never fatal if unavailable)
  // "full" or "fast" (core/counter_set.hpp): fast leaves out the two
  // breakdown metrics that need most of the profiler's passes.
  std::string counter_set = kDefaultCounterSet;
  bool baselines = true;       // measure cuBLAS/cuBLASLt in the same run
  bool timing = true;          // false: verify only (status ok, timing reported as skipped)
  // Also time back-to-back calls (warm L2, graph replay) and the host latency
  // per call, after the cold timing. Nothing ranks by them; a sweep that only
  // ranks by cold time skips them (reported as skipped / 0).
  bool hot = true;
  int verify_trials = kDefaultVerifyTrials;
  // Also verify on other shapes (shape_generic_probes): for candidates that
  // claim to be shape-generic (this flag, or meta["shape_generic"] = true).
  bool shape_generic = false;
  std::string rank_by = kDefaultRankBy;  // recorded; nothing reads it yet
};
TESSERA_JSON_DECLARE(EvalOptions);

// bad_input naming the field: a counter set that is not one, verify_trials
// outside [1, kMaxVerifyTrials].
void validate(const EvalOptions& o, const std::string& where);
// `base` with the keys of `j` read over it (strictly), then validated.
EvalOptions parse_eval_options(const nlohmann::json& j, const EvalOptions& base, const std::string& where);
// What a caller who does not own the evaluator (an HTTP client) may ask for
// on top of the owner's options: anything but less checking. Refused, naming
// the field: fewer verify_trials, timing off (the timed calls are checked
// too) and shape_generic off where the owner has them.
void check_no_weaker(const EvalOptions& asked, const EvalOptions& owner, const std::string& where);

// ---- Sandbox options --------------------------------------------------------

inline constexpr double kWorkerHeartbeatTimeoutSeconds = 15.0;  // max silence during one GPU step
inline constexpr double kCompileTimeoutSeconds = 120.0;         // one compile; a compile bomb becomes `timeout`
inline constexpr const char* kDefaultArch = "sm_90a";           // compile-only mode, and before a GPU is known
inline constexpr int kDefaultAutotuneMaxAlgos = 16;             // cuBLASLt heuristic algorithms timed
inline constexpr int kDefaultSandboxInfraRetries = 1;           // fresh-worker attempts after an infra_error
inline constexpr int kMaxSandboxInfraRetries = 8;

struct SandboxOptions {
  EvalMode mode = EvalMode::auto_detect;
  int device = 0;                  // CUDA device ordinal for this evaluator's worker
  std::string arch;                // empty: from the device (sm_90a on H100), kDefaultArch in compile-only mode
  std::filesystem::path self_exe;  // the tessera binary; empty = /proc/self/exe
  std::filesystem::path log_dir;   // worker stderr logs; empty = cache_dir()/logs
  double heartbeat_timeout_s = kWorkerHeartbeatTimeoutSeconds;
  double compile_timeout_s = kCompileTimeoutSeconds;  // per candidate
  bool remeasure_baselines = false;  // ignore the baseline autotune cache
  int autotune_max_algos = kDefaultAutotuneMaxAlgos;
  // Measure the device's ceiling (the cuBLAS peak over large squares, the
  // DRAM bandwidth and an empty kernel's time; stored per GPU under the cache
  // folder) when none is stored. Off for verify-only runs, e.g. under
  // compute-sanitizer, where those GEMMs would take minutes; peak_fraction is
  // then 0 and nothing is checked against the ceiling.
  bool measure_peak = true;
  // Measure the device's ceiling again even when one is stored
  // (`tessera doctor --measure-peak`).
  bool remeasure_ceiling = false;
  // An infra_error (the worker killed from outside, the GPU busy, a harness
  // failure) is evaluated again on a fresh worker this many times before it
  // is reported (masked) as infra_error. A judged pool (Python, the service)
  // has 0 here: the judge retries, as its EnvConfig says (env/judge.hpp).
  int infra_retries = kDefaultSandboxInfraRetries;
};
TESSERA_JSON_DECLARE(SandboxOptions);

// bad_input naming the field: a device below 0, timeouts not above 0,
// autotune_max_algos below 1, infra_retries outside [0, kMaxSandboxInfraRetries].
void validate(const SandboxOptions& o, const std::string& where);
// `base` with the keys of `j` read over it (strictly), then validated.
SandboxOptions parse_sandbox_options(const nlohmann::json& j, const SandboxOptions& base, const std::string& where);

// ---- The device's ceiling ---------------------------------------------------

// What the worker measured once per GPU (worker/ceiling_probe.hpp): the
// tensor peak, the DRAM bandwidth and an empty kernel's cold time.
struct DeviceCeiling {
  double peak_tflops = 0;   // the best cuBLAS/cuBLASLt over large squares, TFLOP/s
  std::string peak_source;  // how the peak was obtained
  double dram_gbps = 0;     // a streaming copy, GB/s
  double floor_us = 0;      // an empty kernel, cold, microseconds
};
TESSERA_JSON_DECLARE(DeviceCeiling);

DeviceCeiling ceiling_of(const DeviceSummary& d);
void apply_ceiling(DeviceSummary& d, const DeviceCeiling& c);

// ---- The sandbox worker's requests (one JSON line each) ---------------------

enum class WorkerOp { hello, ceiling, eval, quit };
std::string to_string(WorkerOp op);
void to_json(nlohmann::json& j, WorkerOp op);
void from_json(const nlohmann::json& j, WorkerOp& op);

// hello (answered with the DeviceSummary), ceiling (answered with a
// DeviceCeiling), quit.
struct WorkerCommand {
  WorkerOp op = WorkerOp::hello;
};
TESSERA_JSON_DECLARE(WorkerCommand);

// One evaluation: the compiled candidate and how to measure it; answered with
// an EvalResult and whether the worker is still healthy.
struct WorkerEvalRequest {
  WorkerOp op = WorkerOp::eval;
  Task task;
  CandidateKind kind = CandidateKind::device_only;
  std::string artifact;     // the .cubin or .so in the compile cache
  nlohmann::json contract;  // device-only: the exported TesseraLaunchContract
  DeviceCeiling ceiling;    // the harness's figures (the peak only goes up), for peak_fraction
  EvalOptions options;
  std::uint64_t seed = 1;   // where the hidden reference lies and which timed calls are checked
};
TESSERA_JSON_DECLARE(WorkerEvalRequest);

// The op of a request line; bad_input when it names none or an unknown one.
WorkerOp worker_op_of(const nlohmann::json& line);

// ---- The compile child ------------------------------------------------------

struct CompileRequest {
  CandidateKind kind = CandidateKind::device_only;
  std::string source;
  std::string arch = kDefaultArch;         // sm_90a, sm_90, sm_80 ...
  std::vector<std::string> extra_options;  // appended to the compiler's options
};
TESSERA_JSON_DECLARE(CompileRequest);

// `tessera __compile`'s stdin: compile `request` into cache_dir/<key>.*.
struct CompileChildRequest {
  CompileRequest request;
  std::filesystem::path cache_dir;
  std::string key;  // the content key (Compiler::key) the artifact is named by
  double timeout_seconds = kCompileTimeoutSeconds;
};
TESSERA_JSON_DECLARE(CompileChildRequest);

}  // namespace tessera
