#include "core/wire.hpp"

#include <fmt/format.h>

#include "core/counter_set.hpp"
#include "core/error.hpp"
#include "core/wire_enum.hpp"

namespace tessera {

namespace {

constexpr EnumName<EvalMode> kModeNames[] = {
    {EvalMode::auto_detect, "auto"}, {EvalMode::full, "full"}, {EvalMode::compile_only, "compile_only"}};

constexpr EnumName<WorkerOp> kWorkerOpNames[] = {
    {WorkerOp::hello, "hello"}, {WorkerOp::ceiling, "ceiling"}, {WorkerOp::eval, "eval"}, {WorkerOp::quit, "quit"}};

}  // namespace

// ---- Modes

std::string to_string(EvalMode m) { return name_of(m, kModeNames); }
EvalMode parse_eval_mode(std::string_view name) { return parse_enum(name, kModeNames, "evaluation mode"); }
void to_json(nlohmann::json& j, EvalMode m) { j = to_string(m); }
void from_json(const nlohmann::json& j, EvalMode& m) { m = parse_enum_json(j, kModeNames, "evaluation mode"); }

// ---- Evaluation options

TESSERA_JSON_STRUCT(EvalOptions, compile_only, counters, counter_set, baselines, timing, hot, verify_trials,
                    shape_generic, rank_by)

void validate(const EvalOptions& o, const std::string& where) {
  try {
    (void)parse_counter_set(o.counter_set);
  } catch (const Error& e) {
    fail_bad_input(fmt::format("{}.counter_set: {}", where, e.what()));
  }
  if (o.verify_trials < 1 || o.verify_trials > kMaxVerifyTrials)
    fail_bad_input(fmt::format("{}.verify_trials must be from 1 to {} (got {})", where, kMaxVerifyTrials, o.verify_trials));
}

EvalOptions parse_eval_options(const nlohmann::json& j, const EvalOptions& base, const std::string& where) {
  EvalOptions o = read_strict(j, where, base);
  validate(o, where);
  return o;
}

void check_no_weaker(const EvalOptions& asked, const EvalOptions& owner, const std::string& where) {
  if (asked.verify_trials < owner.verify_trials)
    fail_bad_input(fmt::format("{}.verify_trials must be from {} to {}: fewer trials than the server's would weaken the "
                               "check the reward rests on", where, owner.verify_trials, kMaxVerifyTrials));
  if (owner.timing && !asked.timing)
    fail_bad_input(fmt::format("{}.timing cannot be turned off here: the timed calls are checked too", where));
  if (owner.shape_generic && !asked.shape_generic)
    fail_bad_input(fmt::format("{}.shape_generic cannot be turned off here: the server checks every kernel on other "
                               "shapes", where));
}

// ---- Sandbox options

TESSERA_JSON_STRUCT(SandboxOptions, mode, device, arch, self_exe, log_dir, heartbeat_timeout_s, compile_timeout_s,
                    remeasure_baselines, autotune_max_algos, measure_peak, remeasure_ceiling, infra_retries)

void validate(const SandboxOptions& o, const std::string& where) {
  if (o.device < 0) fail_bad_input(fmt::format("{}.device must be 0 or more (got {})", where, o.device));
  if (!(o.heartbeat_timeout_s > 0))
    fail_bad_input(fmt::format("{}.heartbeat_timeout_s must be above 0 (got {})", where, o.heartbeat_timeout_s));
  if (!(o.compile_timeout_s > 0))
    fail_bad_input(fmt::format("{}.compile_timeout_s must be above 0 (got {})", where, o.compile_timeout_s));
  if (o.autotune_max_algos < 1)
    fail_bad_input(fmt::format("{}.autotune_max_algos must be 1 or more (got {})", where, o.autotune_max_algos));
  if (o.infra_retries < 0 || o.infra_retries > kMaxSandboxInfraRetries)
    fail_bad_input(fmt::format("{}.infra_retries must be from 0 to {} (got {})", where, kMaxSandboxInfraRetries,
                               o.infra_retries));
}

SandboxOptions parse_sandbox_options(const nlohmann::json& j, const SandboxOptions& base, const std::string& where) {
  SandboxOptions o = read_strict(j, where, base);
  validate(o, where);
  return o;
}

// ---- The device's ceiling

TESSERA_JSON_STRUCT(DeviceCeiling, peak_tflops, peak_source, dram_gbps, floor_us)

DeviceCeiling ceiling_of(const DeviceSummary& d) { return {d.peak_tflops, d.peak_source, d.dram_gbps, d.floor_us}; }

void apply_ceiling(DeviceSummary& d, const DeviceCeiling& c) {
  d.peak_tflops = c.peak_tflops;
  d.peak_source = c.peak_source;
  d.dram_gbps = c.dram_gbps;
  d.floor_us = c.floor_us;
}

// ---- The sandbox worker's requests

std::string to_string(WorkerOp op) { return name_of(op, kWorkerOpNames); }
void to_json(nlohmann::json& j, WorkerOp op) { j = to_string(op); }
void from_json(const nlohmann::json& j, WorkerOp& op) { op = parse_enum_json(j, kWorkerOpNames, "worker op"); }

TESSERA_JSON_STRUCT(WorkerCommand, op)
TESSERA_JSON_STRUCT(WorkerEvalRequest, op, task, kind, artifact, contract, ceiling, options, seed)

WorkerOp worker_op_of(const nlohmann::json& line) {
  if (!line.is_object() || !line.contains("op")) fail_bad_input("a worker request names its op");
  WorkerOp op = WorkerOp::hello;
  read_value_strict(line.at("op"), op, "worker request.op");
  return op;
}

// ---- The compile child

TESSERA_JSON_STRUCT(CompileRequest, kind, source, arch, extra_options)
TESSERA_JSON_STRUCT(CompileChildRequest, request, cache_dir, key, timeout_seconds)

}  // namespace tessera
