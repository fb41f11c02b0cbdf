// The fault corpus (tests/faults/corpus): every kernel gets the right status,
// the harness survives the whole corpus in one process, and a correct kernel
// evaluated right after each fault is ok. Without a GPU the compile-stage
// faults are still checked (compile-only mode).
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "harness/candidate.hpp"
#include "harness/sandbox.hpp"
#include "tests/testing.hpp"

namespace tessera {
namespace {

struct Expectation {
  const char* file;
  Status status;
  bool needs_gpu;  // only a GPU run can reach this status
  const char* reason_contains;
};

const Expectation kCorpus[] = {
    {"compile_error.cu", Status::compile_error, false, "NVRTC"},
    {"compile_bomb.cu", Status::timeout, false, "compile exceeded"},
    {"unlinkable_tu.cu", Status::compile_error, false, "nvcc failed"},
    {"calls_cublas_tu.cu", Status::rejected, false, "cublas"},
    {"dlopen_cublas_tu.cu", Status::rejected, false, "dlopen"},
    {"timer_name_tu.cu", Status::rejected, false, "reserved for the harness's timer"},
    {"too_much_smem.cu", Status::launch_error, false, "shared memory"},
    {"oob_write.cu", Status::wrong_answer, true, "canary"},
    {"illegal_address.cu", Status::runtime_fault, true, "Illegal"},
    {"trap.cu", Status::runtime_fault, true, ""},
    {"infinite_loop.cu", Status::timeout, true, "no progress"},
    {"wrong_result.cu", Status::wrong_answer, true, "outside tolerance"},
    {"nan_output.cu", Status::wrong_answer, true, ""},
    {"fp16_accumulate.cu", Status::wrong_answer, true, "uniform_pos"},
    {"skip_rows.cu", Status::wrong_answer, true, "never written"},
    {"mutate_input.cu", Status::wrong_answer, true, "modified its inputs"},
};

std::string corpus(const std::string& f) { return std::string(TESSERA_SOURCE_DIR) + "/tests/faults/corpus/" + f; }

SandboxOptions options(const std::string& mode) {
  SandboxOptions o;
  o.mode = mode;
  o.self_exe = TESSERA_BINARY;
  o.heartbeat_timeout_s = 5;
  o.compile_timeout_s = 10;
  return o;
}

TEST(FaultCorpus, CompileStageFaultsWithoutGpu) {
  auto ev = make_evaluator(options("compile_only"));
  const Task task = task_from_shape("256x256x1024");
  EvalOptions eo;
  for (const auto& e : kCorpus) {
    auto r = ev->evaluate(load_candidate(corpus(e.file)), task, eo);
    const Status want = e.needs_gpu ? Status::compiled : e.status;
    EXPECT_EQ(r.status, want) << e.file << ": " << r.reason;
    if (e.needs_gpu) {
      EXPECT_EQ(r.verify.status, "skipped") << "compile-only must never claim verification";
    } else {
      EXPECT_NE(r.reason.find(e.reason_contains), std::string::npos) << e.file << ": " << r.reason;
    }
  }
}

TEST(FaultCorpus, EveryFaultLabelledAndHarnessSurvives) {
  TESSERA_REQUIRE_GPU();
  auto ev = make_evaluator(options("full"));
  const Task task = task_from_shape("256x256x1024");
  EvalOptions eo;
  eo.counters = false;
  const auto good = load_candidate(corpus("good.cu"));
  for (const auto& e : kCorpus) {
    auto r = ev->evaluate(load_candidate(corpus(e.file)), task, eo);
    EXPECT_EQ(r.status, e.status) << e.file << ": " << r.reason;
    EXPECT_NE(r.reason.find(e.reason_contains), std::string::npos) << e.file << ": " << r.reason;
    auto after = ev->evaluate(good, task, eo);
    EXPECT_EQ(after.status, Status::ok) << "good.cu after " << e.file << ": " << after.reason;
  }
}

TEST(FaultCorpus, HardcodedShapeFailsItsShapeGenericClaim) {
  TESSERA_REQUIRE_GPU();
  auto ev = make_evaluator(options("full"));
  const Task task = task_from_shape("256x256x1024");
  EvalOptions eo;
  eo.counters = false;
  eo.baselines = false;
  auto cand = load_candidate(corpus("hardcoded_shape.cu"));
  EXPECT_EQ(ev->evaluate(cand, task, eo).status, Status::ok) << "correct on its own shape";
  eo.shape_generic = true;
  auto r = ev->evaluate(cand, task, eo);
  EXPECT_EQ(r.status, Status::wrong_answer) << r.reason;
  EXPECT_NE(r.reason.find("shape-generic"), std::string::npos) << r.reason;
  auto good = ev->evaluate(load_candidate(corpus("good.cu")), task, eo);
  EXPECT_EQ(good.status, Status::ok) << "a truly generic kernel passes the same probes: " << good.reason;
}

}  // namespace
}  // namespace tessera
