#include "harness/sandbox.hpp"

#include <cuda_runtime_api.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <string>
#include <thread>
#include <array>
#include <chrono>
#include <optional>
#include <random>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "harness/compiler.hpp"
#include "core/ceiling.hpp"
#include "harness/detail/machine_state.hpp"
#include "core/error.hpp"
#include "core/fs.hpp"
#include "core/hash.hpp"
#include "core/contract.hpp"
#include "harness/subprocess.hpp"
#include "harness/detail/worker_client.hpp"

namespace tessera {

namespace {

constexpr std::size_t kWorkerLogTailBytes = 4096;
constexpr double kCeilingTimeoutSeconds = 300.0;  // peak (three large GEMM sizes), bandwidth and floor
constexpr unsigned kMaxParallelCompiles = 64;  // compile children at once, one per core up to this (as CompileAhead)
constexpr int kSm90SmemOptin = 232448;  // bytes per block, H100 (used when no GPU is present)
constexpr int kSm80SmemOptin = 166912;  // bytes per block, A100

int smem_limit_for_arch(const std::string& arch) { return arch.rfind("sm_8", 0) == 0 ? kSm80SmemOptin : kSm90SmemOptin; }

// What the checks that need the task and the device limits, but no GPU,
// found wrong with a device-only kernel.
enum class StaticProblem {
  none,
  contract,       // its contract does not fit the task: a policy violation (rejected)
  shared_memory,  // it asks for more shared memory than the device has: it cannot launch (launch_error)
};

struct StaticCheck {
  StaticProblem problem = StaticProblem::none;
  std::string reason;
};

Status status_of(StaticProblem p) { return p == StaticProblem::shared_memory ? Status::launch_error : Status::rejected; }

StaticCheck static_check(const nlohmann::json& contract_json, const Task& task, int smem_limit) {
  const auto c = contract_from_json(contract_json);
  if (auto why = check_contract_for_task(c, task); !why.empty()) return {StaticProblem::contract, why};
  if (c.dynamic_smem_bytes > smem_limit)
    return {StaticProblem::shared_memory, fmt::format("the kernel asks for {} bytes of dynamic shared memory; the "
                                                      "device allows {}", c.dynamic_smem_bytes, smem_limit)};
  return {};
}

class SandboxEvaluator final : public Evaluator {
public:
  explicit SandboxEvaluator(SandboxOptions o)
      : options_(std::move(o)),
        compiler_(CompilerOptions{{}, options_.compile_timeout_s, true,
                                  options_.self_exe.empty() ? tessera_executable() : options_.self_exe}),
        rng_(std::random_device{}()) {
    std::string why;
    const bool gpu = gpu_present(&why);
    if (options_.mode == EvalMode::full && !gpu)
      throw Error(Error::Kind::unavailable, "full evaluation needs a CUDA GPU: " + why);
    full_ = options_.mode == EvalMode::full || (options_.mode == EvalMode::auto_detect && gpu);
    if (options_.log_dir.empty()) options_.log_dir = cache_dir() / "logs";
    if (!full_) device_.arch = options_.arch.empty() ? kDefaultArch : options_.arch;
    update_compile_arch();
  }

  std::string describe() const override {
    if (!full_) return fmt::format("compile-only ({}; no GPU: not verified, not timed)", device_.arch);
    if (device_.name.empty()) return fmt::format("GPU {} via sandbox worker (not started yet)", options_.device);
    return fmt::format("{} ({}, {} SMs) via sandbox worker", device_.name, device_.arch, device_.sm_count);
  }

  DeviceSummary device() const override { return device_; }

  EvalResult evaluate(const Candidate& cand, const Task& task, const EvalOptions& eo) override {
    const auto t0 = std::chrono::steady_clock::now();
    EvalResult r;
    r.started_at = utc_now_iso();
    r.task = task;
    r.candidate_name = cand.name;
    r.candidate_kind = to_string(cand.kind);
    r.candidate_hash = content_hash(cand.source);
    const EvalMode mode = full_ && !eo.compile_only ? EvalMode::full : EvalMode::compile_only;
    r.mode = to_string(mode);
    auto finish = [&](EvalResult& res) -> EvalResult {
      res.wall_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      return res;
    };
    try {
      if (mode == EvalMode::full) {
        if (auto why = ensure_worker(); !why.empty()) {
          r.status = Status::infra_error;
          r.reason = why;
          r.fault = "infrastructure";
          r.fault_evidence = "the sandbox worker did not start";
          return finish(r);
        }
      }
      r.device = device_;
      CompileRequest req{cand.kind, cand.source, compile_arch(), {}};
      CompileOutput out = compiler_.compile(req);
      r.compile = out.info;
      r.phase_ms["compile"] = out.info.ms;
      r.resources = out.resources;
      if (out.status != Status::ok) {
        r.status = out.status;
        r.reason = out.reason;
        return finish(r);
      }
      if (cand.kind == CandidateKind::device_only) {
        const int limit = device_.smem_per_block_optin > 0 ? device_.smem_per_block_optin : smem_limit_for_arch(req.arch);
        if (auto check = static_check(out.contract, task, limit); check.problem != StaticProblem::none) {
          r.status = status_of(check.problem);
          r.reason = check.reason;
          return finish(r);
        }
      }
      if (mode == EvalMode::compile_only) {
        r.status = Status::compiled;
        r.reason = "compile-only mode: compiled and statically checked; not verified and not timed";
        return finish(r);
      }
      run_measured(r, cand, out, eo);
      if (r.status == Status::ok && (eo.shape_generic || cand.meta.value("shape_generic", false)))
        check_other_shapes(r, cand, eo);
    } catch (const std::exception& e) {
      r.status = Status::infra_error;
      r.reason = std::string("harness error: ") + e.what();
      r.fault = "infrastructure";
      r.fault_evidence = r.reason;
    }
    if (r.fault.empty() && is_policy_fault(r.status)) {
      r.fault = "candidate";
      r.fault_evidence = r.reason;
    }
    return finish(r);
  }

  void start() override {
    if (full_) (void)ensure_worker();  // evaluate() reports a worker that cannot start
  }

  void precompile(const std::vector<Candidate>& cands) override {
    if (full_ && !ensure_worker().empty()) return;  // evaluate() will report the worker problem
    const unsigned threads = std::max(1u, std::min(kMaxParallelCompiles, std::thread::hardware_concurrency()));
    std::atomic<std::size_t> next{0};
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < threads; ++t) {
      pool.emplace_back([&] {
        for (std::size_t i = next++; i < cands.size(); i = next++) compile_ahead(cands[i]);
      });
    }
    for (auto& th : pool) th.join();
  }

  void compile_ahead(const Candidate& cand) override {
    const std::string arch = compile_arch();
    if (arch.empty()) return;  // no worker has reported its GPU yet: evaluate() compiles
    try {
      (void)compiler_.compile({cand.kind, cand.source, arch, {}});
    } catch (const std::exception&) {
      // evaluate() compiles again and reports it
    }
  }

private:
  // The arch every compile is for: --arch, else the device's. Kept in its own
  // guarded copy, readable from compile_ahead()'s thread (device_ itself is
  // written by the evaluating thread); updated whenever device_ changes.
  void update_compile_arch() {
    std::lock_guard g(arch_mu_);
    compile_arch_ = options_.arch.empty() ? device_.arch : options_.arch;
  }
  std::string compile_arch() const {
    std::lock_guard g(arch_mu_);
    return compile_arch_;
  }

  // Starts a worker when there is none (first use, or the last one faulted).
  std::string ensure_worker() {
    if (worker_ && worker_->running()) return {};
    worker_.reset();
    const auto log = options_.log_dir / fmt::format("worker-{}-gpu{}-{}.log", ::getpid(), options_.device, ++spawned_);
    worker_ = std::make_unique<detail::WorkerClient>(compiler_.options().self_exe, options_.device, log,
                                                     options_.remeasure_baselines, options_.autotune_max_algos);
    auto ready = worker_->start(kWorkerStartTimeoutSeconds);
    if (ready.kind != detail::WorkerReply::Kind::answer) {
      auto why = fmt::format("sandbox worker failed to start: {}\n{}", ready.reason, worker_->log_tail(kWorkerLogTailBytes));
      worker_.reset();
      return why;
    }
    auto hello = worker_->call(WorkerCommand{WorkerOp::hello}, "hello", kWorkerStartTimeoutSeconds);
    if (hello.kind != detail::WorkerReply::Kind::answer) {
      auto why = fmt::format("sandbox worker failed its first request: {}", hello.reason);
      worker_.reset();
      return why;
    }
    auto d = hello.body.at("device").get<DeviceSummary>();
    if (device_.peak_tflops > 0) {  // one ceiling per harness (it only goes up)
      apply_ceiling(d, ceiling_of(device_));
    } else if (auto why = load_or_measure_ceiling(d); !why.empty()) {
      worker_.reset();
      return why;
    }
    device_ = d;
    update_compile_arch();
    spdlog::debug("worker pid {} on {}", worker_->pid(), device_.name);
    return {};
  }

  // The device's ceiling: stored once per GPU, measured when missing (or
  // when asked to measure again) unless this evaluator skips it (verify-only
  // runs under compute-sanitizer).
  std::string load_or_measure_ceiling(DeviceSummary& d) {
    if (!options_.remeasure_ceiling)
      if (auto stored = load_ceiling(d.uuid)) {
        apply_ceiling(d, *stored);
        return {};
      }
    if (!options_.measure_peak && !options_.remeasure_ceiling) return {};
    spdlog::info("measuring the ceiling of {} (peak, bandwidth, floor): once per GPU", d.name);
    auto reply = worker_->call(WorkerCommand{WorkerOp::ceiling}, "ceiling", kCeilingTimeoutSeconds);
    if (reply.kind != detail::WorkerReply::Kind::answer)
      return fmt::format("sandbox worker could not measure the device's ceiling: {}", reply.reason);
    const auto c = read_strict<DeviceCeiling>(reply.body.at("ceiling"), "the worker's ceiling");
    apply_ceiling(d, c);
    try {
      store_ceiling(d, nlohmann::json(c));
    } catch (const std::exception& e) {
      spdlog::warn("could not store the measured ceiling: {}", e.what());
    }
    return {};
  }

  // One evaluation in the worker, retried on a fresh worker when the machine
  // failed, and re-measured on a fresh worker when it claims a time faster
  // than the device can go.
  void run_measured(EvalResult& r, const Candidate& cand, const CompileOutput& out, const EvalOptions& eo) {
    const EvalResult before = r;
    std::string history;
    for (int attempt = 1;; ++attempt) {
      run_in_worker(r, cand, out, eo);
      r.attempts = attempt;
      if (!history.empty()) r.fault_evidence = history + r.fault_evidence;
      if (r.status == Status::infra_error && attempt <= options_.infra_retries) {
        history += fmt::format("attempt {}: {} ({}); ", attempt, r.reason, r.fault_evidence);
        drop_worker();
        if (auto why = ensure_worker(); !why.empty()) {
          r.reason = why;
          r.fault_evidence = history + "the fresh worker did not start";
          return;
        }
        r = reset_for_retry(before, attempt);
        continue;
      }
      break;
    }
    if (r.status != Status::ok) return;
    const Ceiling c = ceiling_for(r.task, device_);
    if (!c.implausible(r.cold.median_us)) return;
    // Faster than the device allows: measured again by a fresh worker before
    // anything is paid.
    const EvalResult first = r;
    drop_worker();
    if (auto why = ensure_worker(); !why.empty()) {
      r = reset_for_retry(before, r.attempts);
      r.status = Status::infra_error;
      r.reason = why;
      r.fault = "infrastructure";
      r.fault_evidence = "a fresh worker for the re-measurement of an implausible time did not start";
      return;
    }
    r = reset_for_retry(before, first.attempts);
    run_in_worker(r, cand, out, eo);
    r.attempts = first.attempts + 1;
    if (r.status != Status::ok || !c.implausible(r.cold.median_us)) return;
    r.status = Status::rejected;
    r.reason = fmt::format("implausible: {:.3f} us (and {:.3f} us in a fresh worker) is faster than the device allows "
                           "({})", first.cold.median_us, r.cold.median_us, c.describe());
    r.fault = "candidate";
    r.fault_evidence = r.reason;
  }

  // The result as it was before the worker ran, for another attempt.
  static EvalResult reset_for_retry(const EvalResult& before, int attempts) {
    EvalResult r = before;
    r.attempts = attempts;
    return r;
  }

  void drop_worker() {
    if (worker_) worker_->kill();
    worker_.reset();
  }

  void run_in_worker(EvalResult& r, const Candidate& cand, const CompileOutput& out, const EvalOptions& eo) {
    oom_kills_at_start_ = detail::oom_kills();
    WorkerEvalRequest req;
    req.task = r.task;
    req.kind = cand.kind;
    req.artifact = out.artifact.string();
    req.contract = out.contract;
    req.ceiling = ceiling_of(device_);
    req.options = eo;
    req.seed = rng_();
    auto reply = worker_->call(req, "result", options_.heartbeat_timeout_s);
    using K = detail::WorkerReply::Kind;
    if (reply.kind == K::answer) {
      EvalResult w = reply.body.at("result").get<EvalResult>();
      merge_worker_result(r, w);
      if (!reply.body.value("healthy", true)) {
        worker_->kill();
        worker_.reset();
      }
      return;
    }
    r.worker_log = worker_->log_tail(kWorkerLogTailBytes);
    const pid_t worker_pid = worker_->pid();
    worker_->kill();
    worker_.reset();
    attribute_failure(r, reply, worker_pid);
  }

  // Whose fault a worker that did not answer is. The worker runs no host
  // code of the candidate's (a translation unit's runs in the runner), so a
  // worker that dies was ended by something else: a signal from outside (the
  // OOM killer sends SIGKILL), or a bug of tessera's. A worker that stops
  // answering while the candidate's kernel runs is the candidate's timeout,
  // unless another process was using the GPU.
  void attribute_failure(EvalResult& r, const detail::WorkerReply& reply, pid_t worker_pid) {
    using K = detail::WorkerReply::Kind;
    const auto others = gpu_neighbours(worker_pid);
    if (reply.kind == K::timed_out) {
      const bool candidate_phase = is_candidate_phase(reply.last_phase);
      if (candidate_phase && others.empty()) {
        r.status = Status::timeout;
        r.reason = "the candidate ran past its limit: " + reply.reason;
        r.fault = "candidate";
        r.fault_evidence = fmt::format("no heartbeat during '{}', the candidate's phase; no other process on the GPU",
                                       reply.last_phase);
        return;
      }
      r.status = Status::infra_error;
      r.reason = "the sandbox worker stopped answering: " + reply.reason;
      r.fault = "infrastructure";
      r.fault_evidence = !others.empty() ? "the GPU was busy with another process: " + others
                                         : fmt::format("no heartbeat during '{}', a phase of the harness's own",
                                                       reply.last_phase.empty() ? "start" : reply.last_phase);
      return;
    }
    r.status = Status::infra_error;
    r.fault = "infrastructure";
    if (reply.kind == K::died) {
      const auto oom = detail::oom_kills();
      const bool oom_killed = oom && oom_kills_at_start_ && *oom > *oom_kills_at_start_;
      r.reason = "the sandbox worker died: " + reply.reason;
      r.fault_evidence =
          reply.exit_signal == SIGKILL
              ? fmt::format("killed by SIGKILL, not by tessera: {}", oom_killed ? "the OOM killer (memory.events "
                                                                                 "oom_kill went up)"
                                                                               : "another process or the OOM killer")
              : fmt::format("the worker ended with {} outside any candidate host code",
                            reply.exit_signal ? detail::signal_name(reply.exit_signal)
                                              : "exit code " + std::to_string(reply.exit_code));
      if (!others.empty()) r.fault_evidence += "; other processes on the GPU: " + others;
    } else {
      r.reason = reply.reason;
      r.fault_evidence = "the worker reported a failure of its own: " + reply.reason;
    }
  }

  // The candidate's code runs in these worker phases (heartbeat names).
  static bool is_candidate_phase(const std::string& phase) {
    for (const char* p : {"load", "verify", "timing", "counters"})
      if (phase.rfind(p, 0) == 0) return true;
    return false;
  }

  // Other processes holding the GPU (not the worker, its runner, or us), as text; empty when none or unknown.
  std::string gpu_neighbours(pid_t worker_pid) const {
    const auto procs = detail::gpu_processes(options_.device);
    if (!procs) return {};
    const auto foreign = detail::foreign_processes(*procs, {worker_pid, ::getpid()});
    std::string out;
    for (pid_t p : foreign) out += (out.empty() ? "pid " : ", pid ") + std::to_string(p);
    return out;
  }

  // A shape-generic claim is checked on shapes unlike the task's: odd sizes
  // that no tile divides, and a small one. Verification only.
  void check_other_shapes(EvalResult& r, const Candidate& cand, const EvalOptions& eo) {
    EvalOptions probe = eo;
    probe.shape_generic = false;
    probe.timing = false;
    probe.baselines = false;
    probe.counters = false;
    for (const auto& dims : shape_generic_probes(r.task)) {
      Task t = r.task;
      t.m = dims[0];
      t.n = dims[1];
      t.k = dims[2];
      Candidate c = cand;
      c.meta["shape_generic"] = false;
      EvalResult other = evaluate(c, t, probe);
      if (other.status != Status::ok) {
        r.status = other.status == Status::infra_error ? Status::infra_error : Status::wrong_answer;
        r.reason = fmt::format("claims to be shape-generic but on {}: {} ({})", t.shape(), to_string(other.status),
                               other.reason);
        return;
      }
    }
  }

  void merge_worker_result(EvalResult& r, const EvalResult& w) {
    r.status = w.status;
    r.reason = w.reason;
    r.integrity = w.integrity;
    r.fault = w.fault;
    r.fault_evidence = w.fault_evidence;
    if (r.fault.empty() && is_policy_fault(r.status)) {
      r.fault = "candidate";
      r.fault_evidence = r.reason;
    }
    // The peak only goes up (a baseline measured above it becomes the peak),
    // here and in the stored ceiling: a stored peak measured low (the H200's
    // probe read 665 TFLOP/s where cuBLAS runs 4096^3 at 759) would otherwise
    // put every later process's "% of peak" above 100.
    raise_peak(device_, w.device.peak_tflops, w.device.peak_source);
    r.verify = w.verify;
    r.cold = w.cold;
    r.hot = w.hot;
    r.host_latency_us = w.host_latency_us;
    r.baselines = w.baselines;
    r.best_baseline = w.best_baseline;
    r.best_baseline_us = w.best_baseline_us;
    r.speedup = w.speedup;
    r.tflops = w.tflops;
    r.peak_fraction = w.peak_fraction;
    r.counters = w.counters;
    r.device = w.device;
    if (r.candidate_kind == to_string(CandidateKind::translation_unit)) r.integrity.host_code = "captured";
    for (const auto& [phase, ms] : w.phase_ms) r.phase_ms[phase] += ms;
    // The loaded function knows registers and shared memory exactly; ptxas
    // alone knows spills.
    if (w.resources.registers >= 0) r.resources.registers = w.resources.registers;
    if (w.resources.static_smem_bytes >= 0) r.resources.static_smem_bytes = w.resources.static_smem_bytes;
    if (w.resources.local_bytes >= 0) r.resources.local_bytes = w.resources.local_bytes;
    if (w.resources.max_threads_per_block >= 0) r.resources.max_threads_per_block = w.resources.max_threads_per_block;
  }

  SandboxOptions options_;
  Compiler compiler_;
  std::unique_ptr<detail::WorkerClient> worker_;
  DeviceSummary device_;
  mutable std::mutex arch_mu_;
  std::string compile_arch_;  // guarded by arch_mu_
  bool full_ = false;
  int spawned_ = 0;
  std::mt19937_64 rng_;
  std::optional<long long> oom_kills_at_start_;
};

}  // namespace

std::vector<std::array<std::int64_t, 3>> shape_generic_probes(const Task& t) {
  auto odd = [](std::int64_t v) { return std::max<std::int64_t>(1, v / 2 + 37); };
  return {{odd(t.m), odd(t.n), odd(t.k) / 8 * 8 + 8}, {64, 128, 256}};
}

int cuda_device_count() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess ? n : 0;
}

bool gpu_present(std::string* reason) {
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess || n == 0) {
    if (reason) *reason = e != cudaSuccess ? cudaGetErrorString(e) : "no CUDA devices";
    return false;
  }
  return true;
}

std::unique_ptr<Evaluator> make_evaluator(const SandboxOptions& options) {
  return std::make_unique<SandboxEvaluator>(options);
}

}  // namespace tessera
