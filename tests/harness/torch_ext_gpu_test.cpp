// The torch-extension example run for real (GPU): verified on shapes that use
// tensor cores on the current stream only, both streams, and the default
// stream only; an operand the task's layout lacks is a launch error, not a crash.
#include <gtest/gtest.h>

#include <string>

#include "harness/candidate_build.hpp"
#include "harness/sandbox.hpp"
#include "tests/testing.hpp"

namespace tessera {
namespace {

Candidate torch_example(const std::string& entry) {
  BuildOptions b;
  b.torch_entry = entry;
  return load_candidate_with(std::string(TESSERA_SOURCE_DIR) + "/examples/torch_ext_hgemm.cu", "auto", b);
}

std::unique_ptr<Evaluator> gpu_evaluator() {
  SandboxOptions o;
  o.mode = EvalMode::full;
  o.self_exe = TESSERA_BINARY;
  return make_evaluator(o);
}

TEST(TorchAdapterGpu, ExampleVerifiesOnEveryStreamMix) {
  TESSERA_REQUIRE_GPU();
  auto ev = gpu_evaluator();
  const Candidate c = torch_example("hgemm(a, b_nk, c)");
  EvalOptions eo;
  eo.counters = false;
  for (const char* shape : {"1024x512x256", "1000x1000x1024", "100x200x72"}) {
    const auto r = ev->evaluate(c, task_from_shape(shape), eo);
    EXPECT_EQ(r.status, Status::ok) << shape << ": " << r.reason << "\n" << r.worker_log;
    EXPECT_EQ(r.verify.status, "passed") << shape;
    EXPECT_EQ(r.cold.status, "measured") << shape;
    EXPECT_EQ(r.hot.status, "measured") << shape << ": warm timing captures the launches into a graph";
  }
}

TEST(TorchAdapterGpu, MissingOperandIsALaunchError) {
  TESSERA_REQUIRE_GPU();
  auto ev = gpu_evaluator();
  EvalOptions eo;
  eo.counters = false;
  const auto r = ev->evaluate(torch_example("hgemm(a, b_nk, c)"), task_from_shape("256x256x256", "NN"), eo);
  EXPECT_EQ(r.status, Status::launch_error) << r.reason;
  EXPECT_NE(r.reason.find("returned 3"), std::string::npos) << r.reason;
}

}  // namespace
}  // namespace tessera
