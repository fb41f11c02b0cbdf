#include "core/result.hpp"

#include "core/error.hpp"
#include "core/json_struct.hpp"

namespace tessera {

std::string to_string(Status s) { return nlohmann::json(s).get<std::string>(); }

bool has_cold_time(const EvalResult& r) {
  return r.status == Status::ok && r.cold.status == "measured" && r.cold.median_us > 0;
}

Status parse_status(const std::string& s) {
  Status st = Status::infra_error;
  nlohmann::json(s).get_to(st);
  if (to_string(st) != s) fail_bad_input("unknown status '" + s + "'");
  return st;
}

TESSERA_JSON_STRUCT(CompileInfo, compiler, arch, key, cached, ms, log, options)
TESSERA_JSON_STRUCT(Resources, registers, static_smem_bytes, dynamic_smem_bytes,
                                                local_bytes, spill_stores, spill_loads, max_threads_per_block)
TESSERA_JSON_STRUCT(TrialStats, distribution, max_abs_err, rel_l2_err, mismatches,
                                                unwritten, nonfinite, flip_fraction, decided_flip_fraction, passed)
TESSERA_JSON_STRUCT(VerifyStats, status, trials, trials_passed, max_abs_err, rel_l2_err,
                                                mismatches, inputs_intact, canaries_intact, workspace_restored,
                                                failure, per_trial, determinism, repeat)
TESSERA_JSON_STRUCT(TimingStats, status, method, samples, discarded_throttled,
                                                discarded_other, median_us, mean_us, min_us, max_us, p10_us, p90_us,
                                                rel_spread, median_ci, converged, elapsed_ms, sm_clock_ghz, reason)
TESSERA_JSON_STRUCT(AutotuneTrial, index, median_us, final_us, error)
TESSERA_JSON_STRUCT(BaselineResult, name, algo, cold, error, autotune)
TESSERA_JSON_STRUCT(DeviceSummary, name, uuid, sm_count, arch, peak_tflops, peak_source, dram_gbps, floor_us, l2_bytes,
                    smem_per_block_optin, sm_clock_mhz)
TESSERA_JSON_STRUCT(IntegrityStats, timed_calls, checked_calls, checked_hot_replays, inputs_refreshed,
                    reference_hidden, host_code, hot_calls)

void to_json(nlohmann::json& j, const EvalResult& v) {
  j = nlohmann::json{{"status", v.status},
                     {"reason", v.reason},
                     {"task", to_json(v.task)},
                     {"candidate_name", v.candidate_name},
                     {"candidate_kind", v.candidate_kind},
                     {"candidate_hash", v.candidate_hash},
                     {"mode", v.mode},
                     {"compile", v.compile},
                     {"resources", v.resources},
                     {"verify", v.verify},
                     {"cold", v.cold},
                     {"hot", v.hot},
                     {"host_latency_us", v.host_latency_us},
                     {"baselines", v.baselines},
                     {"best_baseline", v.best_baseline},
                     {"best_baseline_us", v.best_baseline_us},
                     {"speedup", v.speedup},
                     {"tflops", v.tflops},
                     {"peak_fraction", v.peak_fraction},
                     {"counters", v.counters},
                     {"device", v.device},
                     {"integrity", v.integrity},
                     {"fault", v.fault},
                     {"fault_evidence", v.fault_evidence},
                     {"attempts", v.attempts},
                     {"worker_log", v.worker_log},
                     {"wall_ms", v.wall_ms},
                     {"phase_ms", v.phase_ms},
                     {"started_at", v.started_at},
                     {"schema", "tessera.eval_result/1"}};
}

void from_json(const nlohmann::json& j, EvalResult& v) {
  EvalResult d;
  v.status = j.value("status", d.status);
  v.reason = j.value("reason", d.reason);
  if (j.contains("task")) v.task = parse_task(j.at("task"));
  v.candidate_name = j.value("candidate_name", d.candidate_name);
  v.candidate_kind = j.value("candidate_kind", d.candidate_kind);
  v.candidate_hash = j.value("candidate_hash", d.candidate_hash);
  v.mode = j.value("mode", d.mode);
  v.compile = j.value("compile", d.compile);
  v.resources = j.value("resources", d.resources);
  v.verify = j.value("verify", d.verify);
  v.cold = j.value("cold", d.cold);
  v.hot = j.value("hot", d.hot);
  v.host_latency_us = j.value("host_latency_us", d.host_latency_us);
  v.baselines = j.value("baselines", d.baselines);
  v.best_baseline = j.value("best_baseline", d.best_baseline);
  v.best_baseline_us = j.value("best_baseline_us", d.best_baseline_us);
  v.speedup = j.value("speedup", d.speedup);
  v.tflops = j.value("tflops", d.tflops);
  v.peak_fraction = j.value("peak_fraction", d.peak_fraction);
  v.counters = j.value("counters", d.counters);
  v.device = j.value("device", d.device);
  v.integrity = j.value("integrity", d.integrity);
  v.fault = j.value("fault", d.fault);
  v.fault_evidence = j.value("fault_evidence", d.fault_evidence);
  v.attempts = integer_value<int>(j, "attempts", d.attempts);
  v.worker_log = j.value("worker_log", d.worker_log);
  v.wall_ms = j.value("wall_ms", d.wall_ms);
  v.phase_ms = j.value("phase_ms", d.phase_ms);
  v.started_at = j.value("started_at", d.started_at);
}

EvalResult make_failure(Status status, std::string reason, const Task& task) {
  EvalResult r;
  r.status = status;
  r.reason = std::move(reason);
  r.task = task;
  return r;
}

}  // namespace tessera
