// tessera bench protocol: the price of the integrity protocol. The same
// kernel is timed in one process, interleaved, once as before (a plain cold
// call) and once guarded (output poisoned, workspace zeroed, inputs varied
// before every call; some calls checked after), so any difference is what
// the guards cost the measured figure. Verification is timed too, without
// and with the determinism check's second run (worker/verify.hpp), since
// that run is verification time. A benchmark: it prints figures.
#include "bench/protocol.hpp"

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "bench/device.hpp"
#include "harness/compiler.hpp"
#include "core/error.hpp"
#include "core/stats.hpp"
#include "harness/subprocess.hpp"
#include "worker/candidate_runtime.hpp"
#include "worker/check.hpp"
#include "worker/floor.hpp"
#include "worker/handles.hpp"
#include "worker/integrity.hpp"
#include "worker/timing.hpp"
#include "worker/verify.hpp"
#include "worker/verify_kernels.hpp"
#include "tile/config.hpp"
#include "tile/emit.hpp"

namespace tessera::bench {

namespace {

// The timer's floor (an empty kernel, one DRAM line per CTA), a 2-3 us small
// GEMM and a large one: the kernels whose medians the guards could move most.
const std::vector<std::string> kDefaultKernels = {
    "floor:empty", "floor:touch", "tile:w64x8x64_g1x1_s2p2_pa_d1_sw_ed_r0_k1s_t_c1x1_none@128x64x128",
    "tile:w128x256x64_g2x1_s3p3_pa_d1_sw_et_r8_k1s_p_c1x1_none@4096x4096x4096"};
constexpr const char* kFloorShape = "256x256x1024";  // the buffers the floor kernels' guards work on

// Verification as an evaluation runs it (EvalOptions' default random trials).
constexpr int kVerifyTrials = 4;

struct Row {
  std::string kernel;
  std::vector<double> old_us, new_us, old_hot, new_hot;
  std::vector<double> old_verify_ms, new_verify_ms;  // without and with the determinism check's second run
  int checked = 0;
};

// A kernel to time: a launch on a parameter block, and whether its output
// can be checked (the floor kernels write none).
struct Subject {
  std::string label;
  Task task;
  std::unique_ptr<worker::GemmCallable> callable;  // null for the floor kernels
  worker::LaunchFn floor;
  nlohmann::json contract;  // device-only: the launch contract (what the determinism check allows)
};

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// Wall time of one verification of the subject, the way an evaluation verifies.
double verify_ms(worker::VerifyContext vc, const std::string& spec) {
  const auto t0 = std::chrono::steady_clock::now();
  const auto v = worker::verify_candidate(vc, kVerifyTrials);
  const double ms = ms_since(t0);
  if (v.status != "passed") fail_bad_input(fmt::format("{} fails verification: {}", spec, v.failure));
  return ms;
}

Subject make_subject(const std::string& spec, int sms, worker::DeviceBuffer& line_in, worker::DeviceBuffer& line_out) {
  Subject s;
  s.label = spec;
  if (spec == "floor:empty") {
    s.task = task_from_shape(kFloorShape);
    s.floor = [](cudaStream_t st) { TESSERA_CUDA_CHECK(worker::launch_floor_empty(1, 128, 0, st)); };
    return s;
  }
  if (spec == "floor:touch") {
    s.task = task_from_shape(kFloorShape);
    s.floor = [sms, i = line_in.get(), o = line_out.get()](cudaStream_t st) {
      TESSERA_CUDA_CHECK(worker::launch_floor_touch(i, o, sms, 256, st));
    };
    return s;
  }
  const auto at = spec.rfind('@');
  if (at == std::string::npos) fail_bad_input("a kernel is FILE.cu@MxNxK, tile:CONFIG@MxNxK, floor:empty or floor:touch");
  s.task = task_from_shape(spec.substr(at + 1));
  const std::string what = spec.substr(0, at);
  std::string source;
  if (what.rfind("tile:", 0) == 0) source = tile::emit(tile::parse_config(what.substr(5)), s.task);
  else source = load_candidate(what).source;
  Compiler compiler(CompilerOptions{{}, 120.0, true, tessera_executable()});
  const CompileOutput out = compiler.compile({detect_kind(source), source, kDefaultArch, {}});
  if (out.status != Status::ok) fail_bad_input(fmt::format("{} does not compile: {}", what, out.reason));
  s.callable = worker::load_gemm_callable(detect_kind(source), out.artifact, out.contract, s.task);
  s.contract = out.contract;
  return s;
}

}  // namespace

void run_bench_protocol(const BenchProtocolArgs& a) {
  const cudaDeviceProp opened = open_device(a.device);
  const int sms = opened.multiProcessorCount;
  worker::Stream stream;
  cudaStream_t s = stream.get();
  worker::DeviceBuffer line_in(std::size_t(sms) * 128), line_out(std::size_t(sms) * 16);
  TESSERA_CUDA_CHECK(cudaMemsetAsync(line_in.get(), 0, line_in.bytes(), s));
  worker::Timer timer(s, worker::TimingOptions{});
  std::vector<Row> rows;
  for (const auto& spec : a.kernels.empty() ? kDefaultKernels : a.kernels) {
    Subject sub = make_subject(spec, sms, line_in, line_out);
    worker::TaskBuffers b(sub.task, 7);
    worker::GuardedBuffer ws(sub.callable ? sub.callable->workspace_bytes(sub.task) : 0);
    if (ws.bytes()) TESSERA_CUDA_CHECK(cudaMemsetAsync(ws.data(), 0, ws.bytes(), s));
    TesseraGemmParams p = worker::gemm_params(b, ws, sms);
    worker::LaunchFn launch = sub.floor;
    const worker::Determinism determinism =
        sub.callable ? worker::determinism_required(sub.contract, ws.bytes()) : worker::Determinism::off;
    if (sub.callable) {
      sub.callable->prepare_params(p);
      launch = [&](cudaStream_t st) { sub.callable->launch(p, st); };
      worker::VerifyContext vc{b, *sub.callable, p, s, 11, {}, determinism};
      const auto v = worker::verify_candidate(vc, 1);
      if (v.status != "passed") fail_bad_input(fmt::format("{} fails verification: {}", spec, v.failure));
    }
    worker::CandidateGuards guards(b, ws, s, 13);
    worker::CallGuard guard = guards.cold();
    if (!sub.callable) {  // floor kernels write no output: prepared like a candidate, never checked
      guard.check = nullptr;
      guard.verdict = nullptr;
    }
    Row row{spec, {}, {}, {}, {}, {}, {}, 0};
    for (int rep = 0; rep < a.repeat && sub.callable; ++rep) {
      // Verification without and with the determinism check's second run,
      // in both orders; the check's run is verification time.
      worker::VerifyContext plain{b, *sub.callable, p, s, 21 + std::uint64_t(rep), {}, worker::Determinism::off};
      worker::VerifyContext checked = plain;
      checked.determinism = determinism;
      const bool checked_first = rep % 2 == 1;
      const double first = verify_ms(checked_first ? checked : plain, spec);
      const double second = verify_ms(checked_first ? plain : checked, spec);
      row.old_verify_ms.push_back(checked_first ? second : first);
      row.new_verify_ms.push_back(checked_first ? first : second);
    }
    for (int rep = 0; rep < a.repeat; ++rep) {
      // Both orders, so neither variant always runs right after the other.
      const bool guarded_first = rep % 2 == 1;
      std::vector<worker::GuardedCall> calls = {{launch, nullptr}, {launch, &guard}};
      if (guarded_first) std::swap(calls[0], calls[1]);
      const auto t = timer.cold_guarded(calls, 100 + rep);
      if (!t.violation.empty()) fail_bad_input(fmt::format("{}: a checked call failed: {}", spec, t.violation));
      row.old_us.push_back(t.stats[guarded_first ? 1 : 0].median_us);
      row.new_us.push_back(t.stats[guarded_first ? 0 : 1].median_us);
      row.checked += t.checked_calls;
      row.old_hot.push_back(timer.hot(launch).median_us);
      if (sub.callable) {
        // Each replayed call on inputs and an output of its own, all fresh before every replay.
        const worker::HotGuard hg = guards.hot(*sub.callable, p, timer.options().hot_batch);
        const auto h = timer.hot_guarded(hg, 200 + rep);
        if (!h.violation.empty()) fail_bad_input(fmt::format("{}: a checked replay failed: {}", spec, h.violation));
        row.new_hot.push_back(h.stats.median_us);
      }
    }
    rows.push_back(std::move(row));
  }
  if (a.json) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& r : rows)
      out.push_back({{"kernel", r.kernel}, {"old_cold_us", r.old_us}, {"new_cold_us", r.new_us},
                     {"old_hot_us", r.old_hot}, {"new_hot_us", r.new_hot}, {"old_verify_ms", r.old_verify_ms},
                     {"new_verify_ms", r.new_verify_ms}, {"checked_calls", r.checked}});
    fmt::print("{}\n", nlohmann::json{{"device", opened.name}, {"rows", out}}.dump(2));
    return;
  }
  fmt::print("bench protocol on {}: the same kernel timed plain (old) and guarded (new), interleaved, {} passes; "
             "verified with {} random trials without (old) and with (new) the determinism check\n",
             opened.name, a.repeat, kVerifyTrials);
  fmt::print("{:<72}{:>10}{:>10}{:>8}{:>10}{:>10}{:>11}{:>11}{:>8}{:>9}\n", "kernel", "old us", "new us", "cold",
             "old hot", "new hot", "old ver ms", "new ver ms", "verify", "checked");
  const auto cell = [](const std::vector<double>& v, const char* format) {
    return v.empty() ? std::string("-") : fmt::format(fmt::runtime(format), stats::upper_median(v));
  };
  for (const auto& r : rows) {
    const double o = stats::upper_median(r.old_us), n = stats::upper_median(r.new_us);
    const double vo = stats::upper_median(r.old_verify_ms), vn = stats::upper_median(r.new_verify_ms);
    fmt::print("{:<72}{:>10.3f}{:>10.3f}{:>+7.2f}%{:>10.3f}{:>10}{:>11}{:>11}{:>8}{:>9}\n", r.kernel, o, n,
               o > 0 ? 100 * (n / o - 1) : 0, stats::upper_median(r.old_hot), cell(r.new_hot, "{:.3f}"),
               cell(r.old_verify_ms, "{:.2f}"), cell(r.new_verify_ms, "{:.2f}"),
               vo > 0 ? fmt::format("{:+.1f}%", 100 * (vn / vo - 1)) : std::string("-"), r.checked);
  }
}

}  // namespace tessera::bench
