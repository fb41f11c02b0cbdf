#include "tests/env/fake_evaluator.hpp"

#include <limits>
#include <regex>

#include <fmt/format.h>

#include "tests/testing.hpp"

namespace tessera::testing {

namespace {
constexpr double kFakeBaselineUs = 100.0;
constexpr double kDefaultFakeSpeedup = 0.5;

// FAKE_INFRA_TIMES(n): n; FAKE_INFRA_ONCE: 1; FAKE_INFRA: every attempt; else 0.
int infra_failures_in(const std::string& source) {
  static const std::regex r(R"(FAKE_INFRA_TIMES\(([0-9]+)\))");
  std::smatch m;
  if (std::regex_search(source, m, r)) return std::stoi(m[1]);
  if (source.find("FAKE_INFRA_ONCE") != std::string::npos) return 1;
  return source.find("FAKE_INFRA") != std::string::npos ? std::numeric_limits<int>::max() : 0;
}

double speedup_in(const std::string& source) {
  static const std::regex r(R"(FAKE_SPEEDUP\(([0-9.]+)\))");
  std::smatch m;
  return std::regex_search(source, m, r) ? std::stod(m[1]) : kDefaultFakeSpeedup;
}
}  // namespace

DeviceSummary ScriptedEvaluator::device() const {
  DeviceSummary d;
  d.name = device_;
  d.arch = "sm_90a";
  d.sm_count = 132;
  d.smem_per_block_optin = 232448;
  return d;
}

EvalResult ScriptedEvaluator::evaluate(const Candidate& c, const Task& t, const EvalOptions& o) {
  int attempt;
  {
    std::lock_guard g(log_->mu);
    log_->baselines_asked.push_back(o.baselines);
    log_->counters_asked.push_back(o.counters);
    attempt = ++log_->calls_by_source[c.source];
  }
  const int call = ++log_->calls;
  EvalResult r;
  r.task = t;
  r.candidate_name = c.name;
  r.candidate_kind = to_string(c.kind);
  r.mode = "full";
  r.device = device();
  r.started_at = fmt::format("call-{}", call);
  r.compile.compiler = "nvrtc";
  r.compile.arch = "sm_90a";
  const auto has = [&](const char* m) { return c.source.find(m) != std::string::npos; };
  if (attempt <= infra_failures_in(c.source)) {
    r.status = Status::infra_error;
    r.reason = "sandbox worker failed to start: scripted";
    return r;
  }
  if (has("FAKE_LONG_LOG")) {  // a compile error buried in informational output, as ptxas -v prints it
    r.status = Status::compile_error;
    r.reason = "compile error";
    for (int i = 0; i < 400; ++i) r.compile.log += "ptxas info    : Function properties for helper_" + std::to_string(i) + "\n";
    r.compile.log += "kernel.cu(7): error: identifier \"tile_k\" is undefined\n      acc += a[tile_k];\n               ^\n";
    r.compile.log += "1 error detected in the compilation of \"kernel.cu\".\n";
    return r;
  }
  if (has("FAKE_COMPILE_ERROR")) {
    r.status = Status::compile_error;
    r.reason = "compile error";
    r.compile.log = "kernel.cu(3): error: identifier \"acc2\" is undefined";
    return r;
  }
  if (has("FAKE_WRONG")) {
    r.status = Status::wrong_answer;
    r.reason = "trial 1 failed";
    r.verify.status = "failed";
    r.verify.trials = 5;
    r.verify.failure = "trial 1 (uniform): 4096 mismatches, rel L2 3.1e-1";
    return r;
  }
  mark_timed_ok(r, kFakeBaselineUs / speedup_in(c.source));
  if (o.baselines) {
    r.baselines = {{"cublas_tn", "default", {}, ""}, {"cublaslt_heuristic", "algo 0", {}, ""}};
    for (auto& b : r.baselines) {
      b.cold.status = "measured";
      b.cold.median_us = kFakeBaselineUs;
    }
    r.best_baseline = "cublas_tn";
    r.best_baseline_us = kFakeBaselineUs;
    r.speedup = kFakeBaselineUs / r.cold.median_us;
  }
  if (o.counters) r.counters = {{"sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active", 35.0}};
  return r;
}

std::shared_ptr<EvaluatorPool> scripted_pool(const std::shared_ptr<FakeLog>& log, int n, const std::string& device) {
  std::vector<std::unique_ptr<Evaluator>> evs;
  for (int i = 0; i < n; ++i) evs.push_back(std::make_unique<ScriptedEvaluator>(log, device));
  return std::make_shared<EvaluatorPool>(std::move(evs));
}

std::string fake_kernel(const std::string& marker) {
  return "#include \"tessera_abi.cuh\"\n"
         "// " + marker + "\n"
         "extern \"C\" __global__ void tessera_hgemm(const __grid_constant__ TesseraGemmParams p) {\n"
         "  float acc = 0.0f;\n"
         "  p.C[0] = __float2half_rn(acc);\n"
         "}\n";
}

}  // namespace tessera::testing
