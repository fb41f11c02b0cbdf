// End-to-end evaluations through the sandbox worker (GPU), and the
// compile-only contract (CI).
#include <gtest/gtest.h>

#include <unistd.h>

#include <string>
#include <vector>

#include "core/candidate.hpp"
#include "core/error.hpp"
#include "harness/sandbox.hpp"
#include "tests/testing.hpp"

namespace tessera {
namespace {

Candidate example(const char* f) { return load_candidate(std::string(TESSERA_SOURCE_DIR) + "/examples/" + f); }

SandboxOptions opts(const char* mode) {
  SandboxOptions o;
  o.mode = parse_eval_mode(mode);
  o.self_exe = TESSERA_BINARY;
  return o;
}

TEST(Sandbox, CompileOnlyNeverClaimsVerificationOrTiming) {
  auto ev = make_evaluator(opts("compile_only"));
  auto r = ev->evaluate(example("hgemm_wmma.cu"), task_from_shape("512x384x256"), {});
  EXPECT_EQ(r.status, Status::compiled) << r.reason;
  EXPECT_EQ(r.mode, "compile_only");
  EXPECT_EQ(r.verify.status, "skipped");
  EXPECT_EQ(r.cold.status, "skipped");
  EXPECT_EQ(r.speedup, 0.0);
}

TEST(Sandbox, LayoutMismatchIsRejected) {
  auto ev = make_evaluator(opts("compile_only"));
  auto r = ev->evaluate(example("hgemm_naive.cu"), task_from_shape("64x64x64", "NN"), {});
  EXPECT_EQ(r.status, Status::rejected);
  EXPECT_NE(r.reason.find("layout"), std::string::npos) << r.reason;
}

TEST(Sandbox, PrecompileFillsTheCacheInParallel) {
  auto ev = make_evaluator(opts("compile_only"));
  std::vector<Candidate> cands;
  for (int i = 0; i < 4; ++i) {
    Candidate c = example("hgemm_naive.cu");
    c.source = "#define PRECOMPILE_VARIANT " + std::to_string(i) + "_" + std::to_string(::getpid()) + "\n" + c.source;
    cands.push_back(c);
  }
  ev->precompile(cands);
  for (const auto& c : cands) {
    auto r = ev->evaluate(c, task_from_shape("64x64x64"), {});
    EXPECT_EQ(r.status, Status::compiled) << r.reason;
    EXPECT_TRUE(r.compile.cached) << "precompile should have left it in the cache";
  }
}

TEST(Sandbox, UnknownModeIsBadInput) { EXPECT_THROW(make_evaluator(opts("turbo")), Error); }

TEST(Sandbox, ExamplesVerifyAndTimeOnOddShapes) {
  TESSERA_REQUIRE_GPU();
  auto ev = make_evaluator(opts("full"));
  EvalOptions eo;
  for (const char* shape : {"512x384x256", "100x72x40", "1x256x512"}) {
    for (const char* f : {"hgemm_wmma.cu", "hgemm_naive.cu", "hgemm_tu.cu"}) {
      auto r = ev->evaluate(example(f), task_from_shape(shape), eo);
      ASSERT_EQ(r.status, Status::ok) << f << " " << shape << ": " << r.reason << "\n" << r.worker_log;
      EXPECT_EQ(r.verify.status, "passed");
      EXPECT_EQ(r.verify.trials, r.verify.trials_passed);
      EXPECT_GT(r.cold.median_us, 0.0);
      EXPECT_GT(r.speedup, 0.0);
      EXPECT_FALSE(r.best_baseline.empty());
      EXPECT_EQ(r.cold.method, "cupti_activity");
    }
  }
}

TEST(Sandbox, CountersAreReportedOrExplained) {
  TESSERA_REQUIRE_GPU();
  auto ev = make_evaluator(opts("full"));
  auto r = ev->evaluate(example("hgemm_wmma.cu"), task_from_shape("1024x1024x1024"), {});
  ASSERT_EQ(r.status, Status::ok) << r.reason;
  EXPECT_TRUE(r.counters.contains("sm_throughput_pct") || r.counters.contains("error")) << r.counters.dump();
  // Where the evaluation's time went: every phase ran, and the phases fit in
  // the whole.
  double sum = 0;
  for (const char* phase : {"compile", "load", "verify", "timing", "counters"}) {
    ASSERT_TRUE(r.phase_ms.count(phase)) << phase << " missing: " << nlohmann::json(r.phase_ms).dump();
    EXPECT_GE(r.phase_ms.at(phase), 0.0) << phase;
  }
  for (const auto& [phase, ms] : r.phase_ms) sum += ms;
  EXPECT_LE(sum, r.wall_ms * 1.001) << nlohmann::json(r.phase_ms).dump();
  EXPECT_GT(r.phase_ms.at("verify"), 0.0);
}

}  // namespace
}  // namespace tessera
