// The fault corpus (tests/faults/corpus): every kernel gets the right status,
// the harness survives the whole corpus in one process, a correct kernel
// evaluated right after each fault is ok, and afterwards no process the
// harness started and no GPU memory of theirs is left. Without a GPU the
// compile-stage faults are still checked (compile-only mode).
//
// Host code of a translation unit runs in the runner, confined
// (confine/confine.hpp): what it may not do kills it, and the verdict is
// `rejected` with kForbiddenSyscallReason (naming the call) or
// kFileSizeLimitReason; a runner that crashes otherwise is a runtime_fault.
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "core/candidate.hpp"
#include "confine/confine.hpp"
#include "harness/sandbox.hpp"
#include "tests/faults/leak_check.hpp"
#include "tests/testing.hpp"

namespace tessera {
namespace {

struct Expectation {
  const char* file;
  Status status;
  bool needs_gpu;  // only a GPU run can reach this status
  std::string reason_contains;
  // Harmful to the test process itself where the kernel cannot stop it
  // (a signal to the parent): run only where doctor's probe says it is stopped.
  bool needs_confinement = false;
};

std::string forbidden(const char* call) { return std::string(kForbiddenSyscallReason) + " (" + call + ")"; }

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
    // Device code
    {"device_assert.cu", Status::runtime_fault, true, "cudaErrorAssert"},
    {"stack_overflow.cu", Status::runtime_fault, true, ""},
    {"misaligned_access.cu", Status::runtime_fault, true, "Misaligned"},
    {"device_malloc_huge.cu", Status::runtime_fault, true, ""},
    // Host code: what the compile-time policy already stops
    {"fork_tu.cu", Status::rejected, false, "fork"},
    {"system_fnptr_tu.cu", Status::rejected, false, "references system"},
    // Host code: what confinement stops when it runs (raw system calls, which
    // no compile-time rule can name)
    {"fork_vfork_tu.cu", Status::rejected, true, forbidden("vfork")},
    {"fork_clone_tu.cu", Status::rejected, true, forbidden("clone")},
    {"fork_posix_spawn_tu.cu", Status::rejected, false, "posix_spawn"},
    {"socket_tu.cu", Status::rejected, true, forbidden("socket")},
    {"signal_parent_tu.cu", Status::rejected, true, forbidden("kill"), true},
    {"fill_disk_tu.cu", Status::rejected, true, kFileSizeLimitReason},
    {"host_alloc_huge_tu.cu", Status::runtime_fault, true, ""},
    {"device_alloc_huge_tu.cu", Status::launch_error, true, "tessera_launch returned 3"},
    {"thread_left_running_tu.cu", Status::ok, true, ""},
    {"reads_secrets_tu.cu", Status::ok, true, ""},
};

std::string corpus(const std::string& f) { return std::string(TESSERA_SOURCE_DIR) + "/tests/faults/corpus/" + f; }

SandboxOptions options(const std::string& mode) {
  SandboxOptions o;
  o.mode = parse_eval_mode(mode);
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

TEST(FaultCorpus, EveryFaultLabelledAndHarnessSurvivesAndNothingLeaks) {
  TESSERA_REQUIRE_GPU();
  // A TMPDIR of our own marks the processes this harness starts (leak_check.hpp),
  // and the secrets a candidate must not see are planted in its environment.
  ScratchDir tag(std::filesystem::temp_directory_path(), "tessera-fault-corpus-");
  const std::map<std::string, std::string> planted = {
      {"TMPDIR", tag.path().string()}, {"OPENAI_API_KEY", "sk-planted"}, {"AWS_SECRET_ACCESS_KEY", "planted"}};
  std::map<std::string, std::optional<std::string>> saved;
  for (const auto& [k, v] : planted) {
    const char* old = std::getenv(k.c_str());
    saved[k] = old ? std::optional<std::string>(old) : std::nullopt;
    ::setenv(k.c_str(), v.c_str(), 1);
  }
  const ProbeResult probe = probe_protections();
  std::set<pid_t> seen;
  {
    auto ev = make_evaluator(options("full"));
    const Task task = task_from_shape("256x256x1024");
    EvalOptions eo;
    eo.counters = false;
    const auto good = load_candidate(corpus("good.cu"));
    for (const auto& e : kCorpus) {
      if (e.needs_confinement && !probe.signal_parent_blocked) {
        std::printf("skipped %s: this machine cannot stop it (%s)\n", e.file, probe.report.notes.c_str());
        continue;
      }
      auto r = ev->evaluate(load_candidate(corpus(e.file)), task, eo);
      EXPECT_EQ(r.status, e.status) << e.file << ": " << r.reason;
      EXPECT_NE(r.reason.find(e.reason_contains), std::string::npos) << e.file << ": " << r.reason;
      for (pid_t p : testing::tagged_processes(tag.path())) seen.insert(p);
      auto after = ev->evaluate(good, task, eo);
      EXPECT_EQ(after.status, Status::ok) << "good.cu after " << e.file << ": " << after.reason;
    }
    EXPECT_FALSE(seen.empty()) << "the leak check must see the workers it watches";
  }
  for (const auto& [k, old] : saved) old ? (void)::setenv(k.c_str(), old->c_str(), 1) : (void)::unsetenv(k.c_str());
  const auto left = testing::wait_until_gone(seen, 10.0);
  EXPECT_TRUE(left.empty()) << left.size() << " process(es) outlived the harness, first pid " << *left.begin();
  EXPECT_TRUE(testing::tagged_processes(tag.path()).empty()) << "a process of this harness is still running";
  std::string why;
  const auto on_gpu = testing::gpu_processes(&why);
  if (!why.empty()) std::printf("GPU process list not checked: %s\n", why.c_str());
  for (pid_t p : seen) EXPECT_EQ(on_gpu.count(p), 0u) << "pid " << p << " still holds GPU memory";
  std::printf("leak check: %zu worker/runner processes seen, %zu left, %zu on the GPU\n", seen.size(), left.size(),
              on_gpu.size());
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
