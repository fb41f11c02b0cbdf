// The worker's heartbeats follow the GPU's progress inside a batch of timed
// calls, not only between batches: on the H200 the largest grid shape
// (16384x16384x12288) was reported as a timeout because its first batch, 34
// calls and their fp64 reference checks, ran past the parent's 15 s silence
// limit. Skips without a GPU.
#include <gtest/gtest.h>

#include "core/candidate.hpp"
#include "harness/sandbox.hpp"
#include "tests/testing.hpp"

namespace tessera {
namespace {

// Correct, and slow on purpose: every call waits 150 ms before computing, so
// the first cold batch (sized for 100 us calls: about 34 of them) takes
// several seconds while each call alone stays well inside the limit.
const char* kSlowButCorrect = R"(
#include "tessera_abi.cuh"
extern "C" __device__ const TesseraLaunchContract tessera_contract = {
    TESSERA_ABI_VERSION, 256, 16, 16, 1, 0, 0, 1, 1, TESSERA_EPILOGUE_NONE, 0, 0, 0, 0, 0, 0, 0, 0, 0};
extern "C" __global__ void tessera_hgemm(const __grid_constant__ TesseraGemmParams p) {
  unsigned long long t0, t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); } while (t - t0 < 150000000ull);
  const int row = blockIdx.y * 16 + threadIdx.x / 16, col = blockIdx.x * 16 + threadIdx.x % 16;
  if (row >= p.M || col >= p.N) return;
  float acc = 0.f;
  for (int k = 0; k < p.K; ++k) acc += __half2float(p.A[(size_t)row * p.K + k]) * __half2float(p.B[(size_t)col * p.K + k]);
  p.C[(size_t)row * p.N + col] = __float2half_rn(acc);
}
)";

TEST(HeartbeatGpu, ABatchLongerThanTheSilenceLimitIsNotATimeout) {
  TESSERA_REQUIRE_GPU();
  SandboxOptions o;
  o.mode = EvalMode::full;
  o.self_exe = TESSERA_BINARY;
  o.heartbeat_timeout_s = 3;  // the first batch takes about 5 s; one call 0.15 s
  o.measure_peak = false;     // the ceiling's own GEMMs are not what this test times
  auto ev = make_evaluator(o);
  Candidate c;
  c.source = kSlowButCorrect;
  c.kind = detect_kind(c.source);
  c.name = "slow-but-correct";
  EvalOptions eo;
  eo.counters = false;
  eo.hot = false;  // a hot replay is 20 calls in one graph: 3 s by itself
  const auto r = ev->evaluate(c, task_from_shape("64x64x64"), eo);
  ASSERT_EQ(r.status, Status::ok) << r.reason;
  EXPECT_GE(r.cold.median_us, 150000.0) << "the kernel's own wait is inside its time";
  EXPECT_GT(r.integrity.timed_calls, 10) << "the first batch was the long one the test is about";
  EXPECT_TRUE(r.fault.empty()) << r.fault;
}

}  // namespace
}  // namespace tessera
