#pragma once
// The evaluation result record (docs/result-schema.md). It crosses the process
// boundary between the sandbox worker and the harness as JSON, so every field
// has a JSON form and a default.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/task.hpp"

namespace tessera {

enum class Status {
  ok,             // compiled, verified, timed
  compiled,       // compile-only mode: compiled and statically checked; NOT verified or timed
  compile_error,
  launch_error,
  runtime_fault,  // crash, illegal address, trap: the worker died or its context is poisoned
  timeout,        // compile or kernel ran past its limit
  wrong_answer,
  rejected,       // policy violation (reason says which)
  infra_error,    // tessera itself failed; RL trainers should mask, not penalise
};
std::string to_string(Status s);
Status parse_status(const std::string& s);
NLOHMANN_JSON_SERIALIZE_ENUM(Status, {{Status::ok, "ok"},
                                      {Status::compiled, "compiled"},
                                      {Status::compile_error, "compile_error"},
                                      {Status::launch_error, "launch_error"},
                                      {Status::runtime_fault, "runtime_fault"},
                                      {Status::timeout, "timeout"},
                                      {Status::wrong_answer, "wrong_answer"},
                                      {Status::rejected, "rejected"},
                                      {Status::infra_error, "infra_error"}})

struct CompileInfo {
  std::string compiler;  // "nvrtc" or "nvcc"
  std::string arch;      // e.g. "sm_90a"
  std::string key;       // content hash of source+options+compiler+arch
  bool cached = false;
  double ms = 0;
  std::string log;       // trimmed
  // nvcc arguments from the candidate's build directives (include folders,
  // extra flags; docs/abi.md "Build options"); part of the key through the source.
  std::vector<std::string> options;
};

struct Resources {
  int registers = -1;
  int static_smem_bytes = -1;
  int dynamic_smem_bytes = -1;
  int local_bytes = -1;   // per-thread local memory (stack frame)
  int spill_stores = -1;  // bytes, from ptxas
  int spill_loads = -1;
  int max_threads_per_block = -1;
};

struct TrialStats {
  std::string distribution;
  double max_abs_err = 0;
  double rel_l2_err = 0;
  long long mismatches = 0;
  long long unwritten = 0;  // elements still holding the NaN poison
  long long nonfinite = 0;
  double flip_fraction = 0;          // elements whose fp16 value is not round(ref)
  double decided_flip_fraction = 0;  // of all elements: flips the accumulation allowance cannot explain
  bool passed = false;
};

struct VerifyStats {
  std::string status = "skipped";  // passed | failed | skipped
  int trials = 0;
  int trials_passed = 0;
  double max_abs_err = 0;
  double rel_l2_err = 0;  // worst trial, ||C - ref|| / ||ref||
  long long mismatches = 0;
  bool inputs_intact = true;
  bool canaries_intact = true;
  bool workspace_restored = true;
  std::string failure;  // first failure, human-readable
  std::vector<TrialStats> per_trial;
  // The last trial's inputs run twice, the second time with the output and
  // shared memory poisoned with other patterns (docs/harness.md,
  // "Verification"): identical | within_tolerance (the kernel declares partial
  // sums that meet across CTAs, and both runs are within tolerance) | differs
  // | skipped.
  std::string determinism = "skipped";
  TrialStats repeat = {};  // the second run, checked against the same reference
};

struct TimingStats {
  std::string status = "skipped";  // measured | skipped | failed
  std::string method;              // cupti_activity | cuda_events | graph_replay | back_to_back
  int samples = 0;
  int discarded_throttled = 0;
  int discarded_other = 0;
  double median_us = 0, mean_us = 0, min_us = 0, max_us = 0;
  double p10_us = 0, p90_us = 0;
  double rel_spread = 0;  // (p90 - p10) / median
  double median_ci = 0;   // 95% confidence half-width of the median, relative to it
  bool converged = false; // stopped on spread, not on the timeout
  double elapsed_ms = 0;
  double sm_clock_ghz = 0;  // cold: median SM clock of the kept samples (clock probe), GHz
  std::string reason = {};  // why it failed (status failed); never empty then
};

// One algorithm the cuBLASLt autotune timed for cublaslt_autotuned.
struct AutotuneTrial {
  int index = 0;         // in the heuristic's list (the "#k" of the chosen one's algo)
  double median_us = 0;  // its cold median in the autotune's first round (all interleaved); 0: not timed
  // Its cold median in the final round (the first round's fastest few,
  // interleaved under the measurement's own stopping rule), which chose the
  // winner; 0: not a finalist.
  double final_us = 0;
  std::string error;  // why it was not timed (refused, failed), else empty
};

struct BaselineResult {
  std::string name;  // cublas_tn, cublas_nn, cublaslt_heuristic, cublaslt_autotuned
  std::string algo;  // description of the algorithm used
  TimingStats cold;
  std::string error;  // non-empty when this baseline could not run
  // cublaslt_autotuned, when the worker autotuned for this task (empty for a
  // choice from the cache): every algorithm tried, so a record shows what the
  // choice was made against.
  std::vector<AutotuneTrial> autotune = {};  // "= {}": initialisers that leave it out need not name it
};

struct DeviceSummary {
  std::string name;
  std::string uuid;        // "GPU-...", as nvidia-smi spells it (keys the stored ceiling)
  int sm_count = 0;
  std::string arch;
  double peak_tflops = 0;  // measured dense fp16/fp32-acc peak used for peak_fraction
  std::string peak_source; // how the peak was obtained
  double dram_gbps = 0;    // measured DRAM bandwidth (bytes read + written per second), GB/s
  double floor_us = 0;     // cold kernel GPU time of an empty kernel: nothing runs faster
  long long l2_bytes = 0;
  int smem_per_block_optin = 0;  // bytes
  int sm_clock_mhz = 0;
};

// What the harness did to keep the paid launches honest (docs/harness.md, "Integrity").
struct IntegrityStats {
  int timed_calls = 0;          // the candidate's cold timed calls: each on poisoned output and partly fresh inputs
  int checked_calls = 0;        // of those, checked on the device at positions the candidate cannot know
  int checked_hot_replays = 0;  // graph replays of hot timing with one rotated output checked
  bool inputs_refreshed = false;  // rows of A and B refilled before every timed call (a checked call's reference made for them)
  bool reference_hidden = false;  // the reference lives at a random, unmapped-around address
  // Calls per hot replay, each reading an input set of its own and writing an
  // output of its own, all refreshed before every replay (0: no hot timing).
  int hot_calls = 0;
  // Where the candidate's host code ran: "none" (device-only), "captured"
  // (a translation unit's host code, run only under stream capture in the
  // confined runner; every launch that is timed is replayed by the worker).
  std::string host_code = "none";
};

struct EvalResult {
  Status status = Status::infra_error;
  std::string reason;  // one line; why the status is what it is
  Task task;
  std::string candidate_name;
  std::string candidate_kind;  // device_only | translation_unit
  std::string candidate_hash;
  std::string mode;  // full | compile_only
  CompileInfo compile;
  Resources resources;
  VerifyStats verify;
  TimingStats cold;  // kernel GPU time, L2 flushed before each sample (ranking figure)
  TimingStats hot;   // back-to-back / graph replay, warm L2
  double host_latency_us = 0;  // per call, launch path included; never mixed with kernel time
  std::vector<BaselineResult> baselines;
  std::string best_baseline;
  double best_baseline_us = 0;  // cold, measured in this run, interleaved with the candidate
  double speedup = 0;           // best_baseline_us / cold.median_us
  double tflops = 0;
  double peak_fraction = 0;
  nlohmann::json counters = nlohmann::json::object();  // CUPTI metrics, or {"error": ...}
  DeviceSummary device;
  IntegrityStats integrity;
  // Whose failure it is, for a status other than ok/compiled: "candidate"
  // (penalised) or "infrastructure" (infra_error: masked, retried), with the
  // evidence that decided it.
  std::string fault;
  std::string fault_evidence;
  int attempts = 1;        // evaluations it took (an infra_error is retried once on a fresh worker)
  std::string worker_log;  // tail of the worker's stderr when something went wrong
  double wall_ms = 0;
  // Where wall_ms went: compile, and the worker's phases (setup, load, verify,
  // baselines, timing, counters, ...); wall time, not kernel time.
  std::map<std::string, double> phase_ms;
  std::string started_at;  // ISO-8601 UTC
};

// A verified candidate whose cold kernel time was measured: what the search
// ranks by and the cost model's rows record.
bool has_cold_time(const EvalResult& r);

void to_json(nlohmann::json& j, const CompileInfo& v);
void from_json(const nlohmann::json& j, CompileInfo& v);
void to_json(nlohmann::json& j, const Resources& v);
void from_json(const nlohmann::json& j, Resources& v);
void to_json(nlohmann::json& j, const TrialStats& v);
void from_json(const nlohmann::json& j, TrialStats& v);
void to_json(nlohmann::json& j, const VerifyStats& v);
void from_json(const nlohmann::json& j, VerifyStats& v);
void to_json(nlohmann::json& j, const TimingStats& v);
void from_json(const nlohmann::json& j, TimingStats& v);
void to_json(nlohmann::json& j, const AutotuneTrial& v);
void from_json(const nlohmann::json& j, AutotuneTrial& v);
void to_json(nlohmann::json& j, const BaselineResult& v);
void from_json(const nlohmann::json& j, BaselineResult& v);
void to_json(nlohmann::json& j, const DeviceSummary& v);
void to_json(nlohmann::json& j, const IntegrityStats& v);
void from_json(const nlohmann::json& j, IntegrityStats& v);
void from_json(const nlohmann::json& j, DeviceSummary& v);
void to_json(nlohmann::json& j, const EvalResult& v);
void from_json(const nlohmann::json& j, EvalResult& v);

// A result for a failure before anything ran (bad candidate file, harness fault).
EvalResult make_failure(Status status, std::string reason, const Task& task);

// Status predicates used by search and env: only `ok` results have a speedup.
inline bool is_success(Status s) { return s == Status::ok; }
inline bool is_policy_fault(Status s) {  // the candidate's fault, not the harness's
  return s != Status::ok && s != Status::compiled && s != Status::infra_error;
}

}  // namespace tessera
