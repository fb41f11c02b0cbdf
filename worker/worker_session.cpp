#include "worker/worker_session.hpp"

#include <cuda_runtime_api.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "worker/baselines/baselines.hpp"
#include "core/result.hpp"
#include "core/result_status.hpp"
#include "worker/candidate_runtime.hpp"
#include "worker/ceiling_probe.hpp"
#include "worker/device_summary.hpp"
#include "worker/gpu_lock.hpp"
#include "worker/check.hpp"
#include "worker/counters.hpp"
#include "worker/lap_clock.hpp"
#include "worker/handles.hpp"
#include "worker/task_buffers.hpp"
#include "worker/timing.hpp"
#include "worker/verify.hpp"
#include "worker/verify_kernels.hpp"
#include "worker/worker_measure.hpp"

namespace tessera::worker {


struct WorkerSession::State {
  Stream stream;
  std::optional<Timer> timer;
  std::unique_ptr<TaskBuffers> buffers;
  std::unique_ptr<baselines::BaselineSuite> suite;
  DeviceSummary device;
  std::unique_ptr<GpuLock> gpu_lock;  // held around every evaluation's and the ceiling probe's GPU work
};

WorkerSession::WorkerSession(WorkerConfig config) : config_(config) {
  TESSERA_CUDA_CHECK(cudaSetDevice(config.device));
  TESSERA_CUDA_CHECK(cudaFree(nullptr));  // create the context now, not inside the first measurement
  state_ = std::make_unique<State>();
  state_->timer.emplace(state_->stream.get(), TimingOptions{});
  state_->device = device_summary(config.device);
  // Opened here, before the worker confines itself (worker_main.cpp): the
  // lock folder is not among the places it may write afterwards.
  state_->gpu_lock = std::make_unique<GpuLock>(state_->device.uuid);
  if (auto why = gpu_lock_disabled_reason(); !why.empty()) std::fprintf(stderr, "gpu lock off: %s\n", why.c_str());
}

WorkerSession::~WorkerSession() = default;

DeviceSummary WorkerSession::hello() const { return state_->device; }

DeviceCeiling WorkerSession::ceiling(const std::function<void(const std::string&)>& heartbeat) {
  // Tens of seconds of the largest GEMMs: another process timing meanwhile
  // would read them, and the peak would read its kernels.
  const auto beat = [&](const std::string& what) { heartbeat(what.empty() ? kGpuWaitPhase : what); };
  GpuLock::Scope gpu(*state_->gpu_lock, beat, "ceiling");
  if (gpu.waited()) heartbeat("ceiling");
  return measure_ceiling(*state_->timer, state_->stream.get(), state_->device.sm_count);
}

namespace {

// The most workspace a candidate may ask for: far above any split-K or
// stream-K need, far below what would starve the harness's own buffers.
constexpr unsigned long long kMaxWorkspaceBytes = 8ull << 30;

// The workspace the candidate asked for, zeroed, canaries armed. Asking for
// more than the limit, or for more than the GPU has, is the candidate's fault.
GuardedBuffer allocate_workspace(unsigned long long bytes, cudaStream_t s) {
  if (bytes > kMaxWorkspaceBytes)
    throw CandidateFault{Status::launch_error, fmt::format("the candidate asks for {} bytes of workspace; at most {} "
                                                           "are given", bytes, kMaxWorkspaceBytes)};
  GuardedBuffer ws;
  try {
    ws = GuardedBuffer(bytes);
  } catch (const Error& e) {
    (void)cudaGetLastError();
    throw CandidateFault{Status::launch_error,
                         fmt::format("the {} bytes of workspace the candidate asks for could not be allocated: {}",
                                     bytes, e.what())};
  }
  if (bytes) {
    TESSERA_CUDA_CHECK(cudaMemsetAsync(ws.data(), 0, bytes, s));
    ws.arm_canaries(s);
  }
  return ws;
}

// Wall time per phase of one evaluation, from the heartbeats the phases send
// ("verify 2/5" counts as "verify"): where an evaluation's time goes.
class PhaseClock {
public:
  // "" keeps the current phase (a keep-alive from inside a phase).
  const std::string& enter(const std::string& what) {
    if (what.empty()) return current_;
    ms_[current_] += lap_.lap();
    current_ = what.substr(0, what.find(' '));
    return current_;
  }
  const std::map<std::string, double>& ms() const { return ms_; }

private:
  std::string current_ = "setup";
  LapClock lap_;
  std::map<std::string, double> ms_;
};

}  // namespace

EvalResult WorkerSession::evaluate(const WorkerEvalRequest& req,
                                   const std::function<void(const std::string&)>& heartbeat) {
  PhaseClock clock;
  const auto beat = [&](const std::string& what) {
    const std::string& phase = clock.enter(what);
    heartbeat(what.empty() ? phase : what);
  };
  EvalResult r;
  {
    // All of it touches the GPU (the reference, the baselines' autotune,
    // verification, timing, counters); compiling was the harness's, before.
    // A wait for another process is its own phase, never the candidate's.
    GpuLock::Scope gpu(*state_->gpu_lock, beat, "eval");
    if (gpu.waited()) beat("setup");
    r = run_eval(req, beat);
  }
  clock.enter("done");
  for (const auto& [phase, ms] : clock.ms()) r.phase_ms[phase] += ms;
  // Whichever way the evaluation ended, its status follows from its stages.
  settle_status(r, StagePlan{req.options.timing, req.options.baselines});
  return r;
}

// A kernel that wrote outside its buffers (or into its inputs) may have
// written anywhere in this context the harness does not check: the worker is
// replaced rather than trusted with the next candidate.
void WorkerSession::taint_if_it_wrote_outside(const EvalResult& r) {
  if (!r.verify.canaries_intact || !r.verify.inputs_intact) healthy_ = false;
}

EvalResult WorkerSession::run_eval(const WorkerEvalRequest& req,
                                   const std::function<void(const std::string&)>& heartbeat) {
  EvalResult r;
  r.task = req.task;
  r.device = state_->device;
  apply_ceiling(r.device, req.ceiling);
  const EvalOptions& opt = req.options;
  cudaStream_t s = state_->stream.get();
  auto& st = *state_;
  // The timer reports progress through this request's heartbeat, and forgets
  // it when the request is done, whichever way it ends.
  struct HeartbeatScope {
    Timer& t;
    ~HeartbeatScope() { t.set_heartbeat({}); }
  } scope{*st.timer};
  // A keep-alive: the timer also runs while the baselines autotune, which
  // must not count as the candidate's timing phase.
  st.timer->set_heartbeat([&] { heartbeat(""); });
  try {
    if (!st.buffers || st.buffers->task.id() != r.task.id()) {
      st.suite.reset();
      st.buffers.reset();
      // The seed places the hidden reference: a fresh one per worker and task.
      st.buffers = std::make_unique<TaskBuffers>(r.task, req.seed ^ std::uint64_t(::getpid()));
    }
    TaskBuffers& b = *st.buffers;
    heartbeat("load");
    auto callable = load_gemm_callable(req.kind, req.artifact, req.contract, r.task);
    const auto ws_bytes = callable->workspace_bytes(r.task);
    GuardedBuffer workspace = allocate_workspace(ws_bytes, s);

    TesseraGemmParams p = gemm_params(b, workspace, st.device.sm_count);
    callable->prepare_params(p);
    r.resources = callable->resources();  // a translation unit knows its kernels once its call is captured

    VerifyContext vc{b, *callable, p, s, req.seed, heartbeat};
    vc.determinism = determinism_required(req.contract, ws_bytes);
    r.verify = verify_candidate(vc, std::max(1, opt.verify_trials));
    if (ws_bytes) {
      unsigned long long nonzero = 0;
      count_not_equal(workspace.data(), ws_bytes, 0, b.scratch.as<unsigned long long>(), s);
      TESSERA_CUDA_CHECK(cudaStreamSynchronize(s));  // s is non-blocking: cudaMemcpy would not wait for it
      TESSERA_CUDA_CHECK(cudaMemcpy(&nonzero, b.scratch.get(), sizeof nonzero, cudaMemcpyDeviceToHost));
      if (nonzero) {
        r.verify.workspace_restored = false;
        r.verify.status = "failed";
        if (r.verify.failure.empty())
          r.verify.failure = fmt::format("the workspace was not restored to zero ({} bytes non-zero)", nonzero);
      }
    }
    if (r.verify.status != "passed") {
      r.status = Status::wrong_answer;
      r.reason = r.verify.failure;
      taint_if_it_wrote_outside(r);
      return r;
    }

    if (!opt.timing) {
      r.status = Status::ok;
      r.reason = "verified; timing not requested";
      return r;
    }
    // Timing on the last trial's inputs (fresh uniform data, never zeros).
    if (opt.baselines && !st.suite) {
      heartbeat("baselines");
      auto ops = baselines::operands_for(r.task, p.A, p.B, static_cast<__half*>(b.C_baseline.data()), p.bias);
      baselines::SuiteOptions so;
      so.remeasure = config_.remeasure_baselines;
      so.autotune_max_algos = config_.autotune_max_algos;
      st.suite = std::make_unique<baselines::BaselineSuite>(r.task, ops, s, so);
      st.suite->prepare(*st.timer);
    }
    baselines::BaselineSuite* suite = opt.baselines ? st.suite.get() : nullptr;
    if (suite) suite->refresh_inputs();
    MeasureContext mc{b, *callable, p, workspace, s, *st.timer, suite, req.seed, opt, heartbeat};
    if (!measure_candidate(mc, r)) {
      taint_if_it_wrote_outside(r);
      return r;
    }
    if (suite) {
      suite->record_times(r.baselines);
      suite->describe_autotune(r.baselines);
    }
  } catch (const CandidateFault& f) {
    r.status = f.status;
    r.reason = f.reason;
    r.fault = f.status == Status::infra_error ? "infrastructure" : "candidate";
    r.fault_evidence = f.reason;
    cudaError_t e = cudaDeviceSynchronize();
    if (e != cudaSuccess && is_sticky(e)) healthy_ = false;
    if (f.status == Status::runtime_fault) healthy_ = false;
    return r;
  } catch (const Error& e) {
    // A CUDA error surfacing in tessera's own calls after the candidate ran
    // is the candidate's fault when the context is now broken.
    cudaError_t ce = cudaDeviceSynchronize();
    if (ce == cudaSuccess) ce = cudaGetLastError();
    if (ce != cudaSuccess) {
      healthy_ = !is_sticky(ce);
      auto f = classify_cuda_error(ce, "while the candidate ran");
      r.status = f.status;
      r.reason = f.reason;
      r.fault = f.status == Status::infra_error ? "infrastructure" : "candidate";
      r.fault_evidence = fmt::format("{} (the harness's call that noticed: {})", f.reason, e.what());
    } else {
      // The context is healthy: tessera's own call failed (an allocation of
      // the harness's buffers, a profiler error), not the candidate.
      r.status = Status::infra_error;
      r.reason = e.what();
      r.fault = "infrastructure";
      r.fault_evidence = std::string("a call of the harness failed with a healthy CUDA context: ") + e.what();
    }
    return r;
  }

  r.status = Status::ok;
  for (const auto& bl : r.baselines) {
    if (!bl.error.empty() || bl.cold.samples == 0) continue;
    if (r.best_baseline.empty() || bl.cold.median_us < r.best_baseline_us) {
      r.best_baseline = bl.name;
      r.best_baseline_us = bl.cold.median_us;
    }
  }
  if (r.cold.median_us > 0) {
    r.tflops = r.task.flops() / (r.cold.median_us * 1e-6) / 1e12;
    if (r.best_baseline_us > 0) r.speedup = r.best_baseline_us / r.cold.median_us;
    // The measured peak can only go up: a baseline that beats it in this run
    // (its clocks were cold when the peak was taken) becomes the peak, so no
    // baseline reads above 100%.
    const double best_baseline_tflops = r.best_baseline_us > 0 ? r.task.flops() / (r.best_baseline_us * 1e-6) / 1e12 : 0;
    if (best_baseline_tflops > r.device.peak_tflops) {
      r.device.peak_tflops = best_baseline_tflops;
      r.device.peak_source = fmt::format("{} at {}, cold, measured during an evaluation (above the peak stored before)",
                                         r.best_baseline, r.task.shape());
    }
    if (r.device.peak_tflops > 0) r.peak_fraction = r.tflops / r.device.peak_tflops;
  }
  return r;
}

}  // namespace tessera::worker
