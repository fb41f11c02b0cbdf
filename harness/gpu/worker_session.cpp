#include "harness/gpu/worker_session.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "baselines/baselines.hpp"
#include "harness/core/result.hpp"
#include "harness/gpu/candidate_runtime.hpp"
#include "harness/gpu/check.hpp"
#include "harness/gpu/counters.hpp"
#include "harness/gpu/lap_clock.hpp"
#include "harness/gpu/handles.hpp"
#include "harness/gpu/task_buffers.hpp"
#include "harness/gpu/timing.hpp"
#include "harness/gpu/verify.hpp"
#include "harness/gpu/verify_kernels.hpp"

namespace tessera::gpu {

namespace {
// The measured peak: best cuBLAS/cuBLASLt TFLOP/s over these square TN GEMMs, cold.
constexpr int kPeakDims[] = {4096, 8192};
}

struct WorkerSession::State {
  Stream stream;
  std::optional<Timer> timer;
  std::unique_ptr<TaskBuffers> buffers;
  std::unique_ptr<baselines::BaselineSuite> suite;
  DeviceSummary device;
};

WorkerSession::WorkerSession(WorkerConfig config) : config_(config) {
  TESSERA_CUDA_CHECK(cudaSetDevice(config.device));
  TESSERA_CUDA_CHECK(cudaFree(nullptr));  // create the context now, not inside the first measurement
  state_ = std::make_unique<State>();
  state_->timer.emplace(state_->stream.get(), TimingOptions{});
  cudaDeviceProp p{};
  TESSERA_CUDA_CHECK(cudaGetDeviceProperties(&p, config.device));
  auto& d = state_->device;
  d.name = p.name;
  d.sm_count = p.multiProcessorCount;
  d.arch = fmt::format("sm_{}{}{}", p.major, p.minor, p.major == 9 ? "a" : "");
  d.l2_bytes = p.l2CacheSize;
  d.smem_per_block_optin = static_cast<int>(p.sharedMemPerBlockOptin);
  int clock_khz = 0;
  cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, config.device);
  d.sm_clock_mhz = clock_khz / 1000;
}

WorkerSession::~WorkerSession() = default;

nlohmann::json WorkerSession::hello(bool measure_peak) {
  if (measure_peak && state_->device.peak_tflops == 0) {
    // Cold, like every ranking figure, and over two sizes: 8192^3 runs into
    // the power cap (its cold samples get throttled), 4096^3 mostly does not.
    for (int dim : kPeakDims) {
      Task t;
      t.m = t.n = t.k = dim;
      TaskBuffers b(t);
      cudaStream_t s = state_->stream.get();
      fill_random(static_cast<__half*>(b.A.data()), b.A.bytes() / 2, Distribution::uniform_sym, 1, s);
      fill_random(static_cast<__half*>(b.B.data()), b.B.bytes() / 2, Distribution::uniform_sym, 2, s);
      auto ops = baselines::operands_for(t, static_cast<const __half*>(b.A.data()),
                                         static_cast<const __half*>(b.B.data()), static_cast<__half*>(b.C.data()),
                                         nullptr);
      baselines::SuiteOptions so;
      so.autotune_max_algos = 4;
      baselines::BaselineSuite suite(t, ops, s, so);
      suite.prepare(*state_->timer);
      std::vector<LaunchFn> fns;
      for (const auto& bl : suite.baselines())
        if (bl.runnable()) fns.push_back(bl.launch);
      for (const auto& st : state_->timer->cold_interleaved(fns)) {
        if (st.samples == 0) continue;
        const double tflops = t.flops() / (st.median_us * 1e-6) / 1e12;
        if (tflops > state_->device.peak_tflops) {
          state_->device.peak_tflops = tflops;
          state_->device.peak_source =
              fmt::format("best cuBLAS/cuBLASLt over 4096^3 and 8192^3 TN fp16 (fp32 acc), cold; reached at {}^3", dim);
        }
      }
    }
  }
  return state_->device;
}

namespace {

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

nlohmann::json WorkerSession::evaluate(const nlohmann::json& req,
                                       const std::function<void(const std::string&)>& heartbeat) {
  PhaseClock clock;
  EvalResult r = run_eval(req, [&](const std::string& what) {
    const std::string& phase = clock.enter(what);
    heartbeat(what.empty() ? phase : what);
  });
  clock.enter("done");
  for (const auto& [phase, ms] : clock.ms()) r.phase_ms[phase] += ms;
  return r;
}

EvalResult WorkerSession::run_eval(const nlohmann::json& req,
                                   const std::function<void(const std::string&)>& heartbeat) {
  EvalResult r;
  r.task = parse_task(req.at("task"));
  r.device = state_->device;
  if (req.contains("peak_tflops")) r.device.peak_tflops = req.at("peak_tflops").get<double>();
  if (req.contains("peak_source")) r.device.peak_source = req.at("peak_source").get<std::string>();
  const auto& opt = req.at("options");
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
      st.buffers = std::make_unique<TaskBuffers>(r.task);
    }
    TaskBuffers& b = *st.buffers;
    heartbeat("load");
    auto callable = load_gemm_callable(req.at("kind").get<std::string>(), req.at("artifact").get<std::string>(),
                                       req.value("contract", nlohmann::json()), r.task);
    r.resources = callable->resources();
    const auto ws_bytes = callable->workspace_bytes(r.task);
    GuardedBuffer workspace(ws_bytes);
    if (ws_bytes) TESSERA_CUDA_CHECK(cudaMemsetAsync(workspace.data(), 0, ws_bytes, s));

    TesseraGemmParams p{};
    p.A = static_cast<const __half*>(b.A.data());
    p.B = static_cast<const __half*>(b.B.data());
    p.C = static_cast<__half*>(b.C.data());
    p.bias = r.task.epilogue == Epilogue::none ? nullptr : static_cast<const __half*>(b.bias.data());
    p.workspace = workspace.data();
    p.workspace_bytes = ws_bytes;
    p.M = static_cast<int>(r.task.m);
    p.N = static_cast<int>(r.task.n);
    p.K = static_cast<int>(r.task.k);
    p.lda = p.K;
    p.ldb = r.task.layout == Layout::TN ? p.K : p.N;
    p.ldc = p.N;
    p.layout = r.task.layout == Layout::TN ? 0 : 1;
    p.num_sms = st.device.sm_count;
    callable->prepare_params(p);

    VerifyContext vc{b, *callable, p, s, opt.value("seed", std::uint64_t{1}), heartbeat};
    r.verify = verify_candidate(vc, std::max(1, opt.value("verify_trials", 4)));
    if (ws_bytes) {
      unsigned long long nonzero = 0;
      count_not_equal(workspace.data(), ws_bytes, 0, b.scratch.as<unsigned long long>(), s);
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
      return r;
    }

    if (!opt.value("timing", true)) {
      r.status = Status::ok;
      r.reason = "verified; timing not requested";
      return r;
    }
    // Timing on the last trial's inputs (fresh uniform data, never zeros).
    auto launch = [&](cudaStream_t stream) { callable->launch(p, stream); };
    std::vector<LaunchFn> fns = {launch};
    std::vector<const baselines::Baseline*> bls;
    if (opt.value("baselines", true)) {
      if (!st.suite) {
        heartbeat("baselines");
        auto ops = baselines::operands_for(r.task, p.A, p.B, static_cast<__half*>(b.C_baseline.data()), p.bias);
        baselines::SuiteOptions so;
        so.remeasure = config_.remeasure_baselines;
        so.autotune_max_algos = config_.autotune_max_algos;
        st.suite = std::make_unique<baselines::BaselineSuite>(r.task, ops, s, so);
        st.suite->prepare(*st.timer);
      }
      st.suite->refresh_inputs();
      for (const auto& bl : st.suite->baselines()) {
        if (bl.runnable()) {
          bls.push_back(&bl);
          fns.push_back(bl.launch);
        } else {
          r.baselines.push_back({bl.name, bl.algo, {}, bl.error});
        }
      }
    }
    heartbeat("timing");
    fill_half_bits(static_cast<__half*>(b.C.data()), b.c_count(), kPoisonBits, s);
    auto times = st.timer->cold_interleaved(fns);
    // The output written while being timed must still be right: catches a
    // kernel that skips work once it has seen the same inputs.
    TrialStats again = check_output(b, s, "timing_runs");
    if (!again.passed) {
      r.status = Status::wrong_answer;
      r.reason = fmt::format("output written during timing is wrong ({} mismatches): work was skipped or cached",
                             again.mismatches);
      r.verify.status = "failed";
      r.verify.failure = r.reason;
      return r;
    }
    r.cold = times[0];
    for (std::size_t i = 0; i < bls.size(); ++i) r.baselines.push_back({bls[i]->name, bls[i]->algo, times[i + 1], ""});
    if (opt.value("hot", true)) {
      r.hot = st.timer->hot(launch);
      r.host_latency_us = st.timer->host_latency_us(launch);
    }
    if (opt.value("counters", true)) {
      heartbeat("counters");
      const CounterSet set = parse_counter_set(opt.value("counter_set", std::string("full")));
      CounterOptions co;
      co.metrics = metrics_for(set);
      r.counters = collect_counters(launch, s, co);
      if (!r.counters.contains("error")) r.counters["counter_set"] = to_string(set);
    }
    if (st.suite) st.suite->record_times(r.baselines);
  } catch (const CandidateFault& f) {
    r.status = f.status;
    r.reason = f.reason;
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
    } else {
      r.status = Status::infra_error;
      r.reason = e.what();
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
    if (r.device.peak_tflops > 0) r.peak_fraction = r.tflops / r.device.peak_tflops;
  }
  return r;
}

}  // namespace tessera::gpu
