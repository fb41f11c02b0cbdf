// The integrity protocol and fault attribution on a real GPU: timed calls are
// checked, a kernel that stops working once timed is caught, translation
// units run captured, a candidate that throws is penalised, and a worker
// killed from outside is masked and retried. Skips without a GPU.
#include <gtest/gtest.h>

#include <signal.h>

#include <chrono>
#include <future>
#include <thread>

#include "core/candidate.hpp"
#include "core/fs.hpp"

#include <nlohmann/json.hpp>
#include "harness/sandbox.hpp"
#include "tests/testing.hpp"

namespace tessera {
namespace {

SandboxOptions full(int infra_retries = 1) {
  SandboxOptions o;
  o.mode = EvalMode::full;
  o.self_exe = TESSERA_BINARY;
  o.heartbeat_timeout_s = 20;
  o.infra_retries = infra_retries;
  return o;
}

EvalOptions quick() {
  EvalOptions eo;
  eo.counters = false;
  return eo;
}

Candidate example(const std::string& file) {
  return load_candidate(std::string(TESSERA_SOURCE_DIR) + "/examples/" + file);
}

Candidate source(const std::string& text, const std::string& name) {
  Candidate c;
  c.kind = detect_kind(text);
  c.source = text;
  c.name = name;
  return c;
}

// Correct for the first launches (verification and warm-up), then returns at
// once: exactly the kernel the old protocol paid 2.9x for.
const char* kStopsWorkingWhenTimed = R"(
#include "tessera_abi.cuh"
extern "C" __device__ const TesseraLaunchContract tessera_contract = {
    TESSERA_ABI_VERSION, 256, 16, 16, 1, 0, 0, 1, 1, TESSERA_EPILOGUE_NONE, 0, 0, 0, 0, 0, 0, 0, 0, 0};
__device__ unsigned long long launches;
extern "C" __global__ void tessera_hgemm(const __grid_constant__ TesseraGemmParams p) {
  __shared__ unsigned long long seen;
  if (threadIdx.x == 0) {
    seen = atomicAdd(&launches, 1ull) / (gridDim.x * gridDim.y);
  }
  __syncthreads();
  if (seen >= 9) return;
  const int row = blockIdx.y * 16 + threadIdx.x / 16, col = blockIdx.x * 16 + threadIdx.x % 16;
  if (row >= p.M || col >= p.N) return;
  float acc = 0.f;
  for (int k = 0; k < p.K; ++k) acc += __half2float(p.A[(size_t)row * p.K + k]) * __half2float(p.B[(size_t)col * p.K + k]);
  p.C[(size_t)row * p.N + col] = __float2half_rn(acc);
}
)";

const char* kThrowingTu = R"(
#include <cuda_runtime.h>
#include <stdexcept>
#include "tessera_abi.cuh"
extern "C" int tessera_launch(const TesseraGemmParams*, cudaStream_t) {
  throw std::runtime_error("the candidate's own exception");
}
)";

TEST(IntegrityGpu, TimedCallsOfAnHonestKernelAreCheckedAndPass) {
  TESSERA_REQUIRE_GPU();
  auto ev = make_evaluator(full());
  const auto r = ev->evaluate(example("hgemm_wmma.cu"), task_from_shape("512x512x512"), quick());
  ASSERT_EQ(r.status, Status::ok) << r.reason;
  EXPECT_GT(r.integrity.timed_calls, 10);
  EXPECT_GE(r.integrity.checked_calls, 2) << "at least one check per batch, at least two batches";
  EXPECT_LT(r.integrity.checked_calls, r.integrity.timed_calls);
  EXPECT_GT(r.integrity.checked_hot_replays, 0);
  EXPECT_TRUE(r.integrity.inputs_refreshed);
  EXPECT_EQ(r.integrity.host_code, "none");
  EXPECT_TRUE(r.fault.empty()) << r.fault;
  EXPECT_GT(r.device.floor_us, 0);
  EXPECT_GT(r.device.dram_gbps, 0);
  EXPECT_LE(r.peak_fraction, 1.0);
}

TEST(IntegrityGpu, AKernelThatStopsWorkingOnceTimedIsAWrongAnswer) {
  TESSERA_REQUIRE_GPU();
  auto ev = make_evaluator(full());
  const auto r = ev->evaluate(source(kStopsWorkingWhenTimed, "stops-when-timed"), task_from_shape("256x256x1024"), quick());
  EXPECT_EQ(r.status, Status::wrong_answer) << r.reason;
  EXPECT_EQ(r.verify.trials_passed, r.verify.trials) << "verification alone sees a correct kernel";
  EXPECT_NE(r.reason.find("timed"), std::string::npos) << r.reason;
  EXPECT_EQ(r.fault, "candidate");
  EXPECT_EQ(r.speedup, 0) << "nothing is paid";
}

TEST(IntegrityGpu, ATranslationUnitRunsCapturedAndReplayedByTheWorker) {
  TESSERA_REQUIRE_GPU();
  auto ev = make_evaluator(full());
  const auto r = ev->evaluate(example("hgemm_tu.cu"), task_from_shape("512x512x512"), quick());
  ASSERT_EQ(r.status, Status::ok) << r.reason << "\n" << r.worker_log;
  EXPECT_EQ(r.integrity.host_code, "captured");
  EXPECT_GT(r.resources.registers, 0) << "the replayed kernel's own attributes";
  EXPECT_GT(r.integrity.checked_calls, 0);
}

TEST(IntegrityGpu, HostCodeThatThrowsIsTheCandidatesFault) {
  TESSERA_REQUIRE_GPU();
  auto ev = make_evaluator(full());
  const auto r = ev->evaluate(source(kThrowingTu, "throws"), task_from_shape("256x256x256"), quick());
  EXPECT_EQ(r.status, Status::launch_error) << r.reason;
  EXPECT_NE(r.reason.find("the candidate's own exception"), std::string::npos) << r.reason;
  EXPECT_EQ(r.fault, "candidate");
  // The worker survived: the next kernel is fine.
  EXPECT_EQ(ev->evaluate(example("hgemm_naive.cu"), task_from_shape("256x256x256"), quick()).status, Status::ok);
}

// Evaluates a slow kernel and SIGKILLs the sandbox worker while it runs.
EvalResult evaluate_and_kill_worker(Evaluator& ev) {
  auto pending = std::async(std::launch::async, [&] {
    return ev.evaluate(example("hgemm_naive.cu"), task_from_shape("2048x2048x2048"), quick());
  });
  bool killed = false;
  for (int i = 0; i < 600 && !killed; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    for (int pid : testing::descendants_running("__worker")) {
      std::this_thread::sleep_for(std::chrono::milliseconds(300));  // inside verification by now
      killed = ::kill(pid, SIGKILL) == 0;
      break;
    }
  }
  EXPECT_TRUE(killed) << "found no worker to kill";
  return pending.get();
}

TEST(IntegrityGpu, AWorkerKilledFromOutsideIsMaskedNotPenalised) {
  TESSERA_REQUIRE_GPU();
  auto ev = make_evaluator(full(/*infra_retries=*/0));
  ev->start();  // context, ceiling: before the kill
  const auto r = evaluate_and_kill_worker(*ev);
  EXPECT_EQ(r.status, Status::infra_error) << r.reason;
  EXPECT_EQ(r.fault, "infrastructure");
  EXPECT_NE(r.fault_evidence.find("SIGKILL"), std::string::npos) << r.fault_evidence;
}

TEST(IntegrityGpu, AWorkerKilledFromOutsideIsRetriedOnAFreshWorker) {
  TESSERA_REQUIRE_GPU();
  auto ev = make_evaluator(full(/*infra_retries=*/1));
  ev->start();
  const auto r = evaluate_and_kill_worker(*ev);
  EXPECT_EQ(r.status, Status::ok) << r.reason;
  EXPECT_EQ(r.attempts, 2);
  EXPECT_NE(r.fault_evidence.find("attempt 1"), std::string::npos) << r.fault_evidence;
}

TEST(IntegrityGpu, ATimeFasterThanTheDeviceCanGoIsRejectedAfterAFreshWorkerAgrees) {
  TESSERA_REQUIRE_GPU();
  // A floor a million times too high stands in for a kernel a million times
  // too fast: the gate's path, end to end, with a real kernel. (A doctored
  // peak would not do: a baseline measured above the stored peak raises it.)
  std::string uuid;
  {
    auto probe = make_evaluator(full());
    probe->start();
    uuid = probe->device().uuid;
  }
  ASSERT_FALSE(uuid.empty());
  const auto path = cache_dir() / "devices" / (uuid + ".json");
  const std::string real = read_file(path);
  auto doctored = nlohmann::json::parse(real);
  doctored["floor_us"] = 1e6;
  atomic_write_file(path, doctored.dump());
  auto ev = make_evaluator(full());
  const auto r = ev->evaluate(example("hgemm_wmma.cu"), task_from_shape("512x512x512"), quick());
  atomic_write_file(path, real);  // the real ceiling back for the tests after this one
  EXPECT_EQ(r.status, Status::rejected) << r.reason;
  EXPECT_NE(r.reason.find("implausible"), std::string::npos) << r.reason;
  EXPECT_NE(r.reason.find("fresh worker"), std::string::npos) << r.reason;
  EXPECT_EQ(r.attempts, 2) << "measured twice before it is rejected";
}

}  // namespace
}  // namespace tessera
