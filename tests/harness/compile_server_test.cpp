// The compile servers (harness/detail/compile_servers.hpp): NVRTC compiles
// answered by long-lived `tessera __compile --serve` processes, with the
// one-shot child's guarantees (time limit, a death is the candidate's
// compile_error, a fresh process after any failure), checked on real compiles.
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "confine/confine.hpp"
#include "core/candidate.hpp"
#include "core/fs.hpp"
#include "harness/compiler.hpp"
#include "harness/detail/compile_servers.hpp"
#include "harness/subprocess.hpp"
#include "tests/testing.hpp"

namespace tessera {
namespace {

using ::tessera::testing::ScopedEnv;

using detail::CompileServers;

std::string example_source(const char* file) {
  return load_candidate(std::string(TESSERA_SOURCE_DIR) + "/examples/" + file).source;
}

// A distinct source: a define the kernel never reads, after the includes
// (where a real candidate differs from another).
CompileRequest variant(const std::string& source, const std::string& tag) {
  return {CandidateKind::device_only, source + "\n#define TESSERA_TEST_VARIANT_" + tag + " 1\n", "sm_90a", {}};
}

// ptxas reports its own compile time in the log: the one line that differs
// between two compiles of the same source.
std::string without_times(const std::string& log) {
  return std::regex_replace(log, std::regex("Compile time = [0-9.]+ ms"), "Compile time = T ms");
}

// The PCH servers' private folders under a cache, and the files in them.
std::pair<int, int> pch_folders_and_files(const std::filesystem::path& cache) {
  int folders = 0, files = 0;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(cache / "child-work", ec)) {
    if (e.path().filename().string().rfind("server-pch-", 0) != 0) continue;
    ++folders;
    for (const auto& f : std::filesystem::recursive_directory_iterator(e.path(), ec)) files += f.is_regular_file();
  }
  return {folders, files};
}

class CompileServerTest : public ::testing::Test {
protected:
  void SetUp() override {
    dir_.emplace(std::filesystem::temp_directory_path(), "tessera-compile-server-test-");
    CompileServers::instance().configure({});  // fresh servers, counts from 0
  }
  void TearDown() override { CompileServers::instance().configure({}); }

  Compiler out_of_process(const std::string& sub, double timeout_s = 120) const {
    return Compiler({dir_->path() / sub, timeout_s, true, TESSERA_BINARY});
  }
  // Compiles here, in the folder a child compiling into cache `sub` works in:
  // NVRTC writes its working folder into the cubin's line table.
  CompileOutput in_process_as(const std::string& sub, const CompileRequest& request) const {
    const auto work = dir_->path() / sub / "child-work";
    std::filesystem::create_directories(work);
    const auto old = std::filesystem::current_path();
    std::filesystem::current_path(work);
    Compiler here({dir_->path() / (sub + "-here"), 120, false, {}});
    auto out = here.compile(request);
    std::filesystem::current_path(old);
    return out;
  }

  // Compiles `request` again in a one-shot child (TESSERA_COMPILE_SERVER=off)
  // into cache `sub`, whose compiled entries are removed first (its working
  // folder stays: NVRTC writes it into the cubin). The answer to compare a
  // server's with: both are what the harness gets from another process. (On
  // the H200 machine a compile inside the test process itself returned no
  // ptxas log, cause not found, while servers and one-shot children did.)
  CompileOutput one_shot_again(const std::string& sub, const CompileRequest& request) const {
    clear_compiled(dir_->path() / sub);
    ScopedEnv off(detail::kCompileServerEnvVar, "off");
    return out_of_process(sub).compile(request);
  }

  std::optional<ScratchDir> dir_;
  ScopedEnv servers_on_{detail::kCompileServerEnvVar, nullptr};
  ScopedEnv no_faults_{detail::kCompileServerFaultsEnvVar, nullptr};
};

void expect_same_output(const CompileOutput& a, const CompileOutput& b) {
  EXPECT_EQ(a.status, b.status);
  EXPECT_EQ(a.reason, b.reason);
  EXPECT_EQ(a.info.compiler, b.info.compiler);
  EXPECT_EQ(a.info.key, b.info.key);
  EXPECT_EQ(without_times(a.info.log), without_times(b.info.log));
  EXPECT_EQ(nlohmann::json(a.resources), nlohmann::json(b.resources));
  EXPECT_EQ(a.contract, b.contract);
  EXPECT_EQ(a.artifact.filename(), b.artifact.filename());
  EXPECT_EQ(a.artifact_hash, b.artifact_hash);  // the same cubin, byte for byte
}

TEST_F(CompileServerTest, ServerGivesTheInProcessCompilesOutput) {
  const auto request = variant(example_source("hgemm_wmma.cu"), "same");
  const auto here = in_process_as("served", request);
  const auto served = out_of_process("served").compile(request);
  ASSERT_EQ(served.status, Status::ok) << served.reason;
  EXPECT_EQ(here.status, Status::ok) << here.reason;
  EXPECT_EQ(read_file(here.artifact), read_file(served.artifact)) << "the same cubin as NVRTC gives in this process";
  const std::string served_cubin = read_file(served.artifact);
  const auto child = one_shot_again("served", request);
  expect_same_output(child, served);
  EXPECT_EQ(read_file(child.artifact), served_cubin);
  EXPECT_EQ(CompileServers::instance().stats().answered, 1);
  // A compile error too: the log and the reason as the compiler gave them.
  const CompileRequest broken{CandidateKind::device_only, "__global__ void tessera_hgemm( {", "sm_90a", {}};
  const auto served_bad = out_of_process("served").compile(broken);
  EXPECT_EQ(served_bad.status, Status::compile_error);
  expect_same_output(one_shot_again("served", broken), served_bad);
  EXPECT_EQ(CompileServers::instance().stats().answered, 2);
  EXPECT_EQ(CompileServers::instance().stats().started, 1);  // the second compile reused the first's server
}

// Precompiled headers (TESSERA_COMPILE_SERVER=pch) change nothing of the
// result: the same cubin and log as a compile without them, for candidates
// that share their #include prefix (the PCH is made by the first, used by the next).
TEST_F(CompileServerTest, PrecompiledHeadersLeaveTheCubinAndLogAsTheyAre) {
  ScopedEnv pch(detail::kCompileServerEnvVar, "pch");
  const auto source = example_source("hgemm_wmma.cu");
  for (const char* tag : {"pch1", "pch2"}) {
    const auto request = variant(source, tag);
    const auto here = in_process_as("served", request);
    const auto served = out_of_process("served").compile(request);
    ASSERT_EQ(served.status, Status::ok) << served.reason;
    EXPECT_EQ(read_file(here.artifact), read_file(served.artifact));
    expect_same_output(one_shot_again("served", request), served);
  }
  EXPECT_EQ(CompileServers::instance().stats().started, 1);
  EXPECT_EQ(CompileServers::instance().stats().answered, 2);
  // The server made a PCH, in a folder of its own, removed when it is closed.
  const auto [folders, files] = pch_folders_and_files(dir_->path() / "served");
  EXPECT_EQ(folders, 1);
  EXPECT_GE(files, 1);
  CompileServers::instance().configure({});
  EXPECT_EQ(pch_folders_and_files(dir_->path() / "served").first, 0);
  EXPECT_EQ(CompileServers::instance().stats().live, 0);
}

// A cache emptied while servers run (bench scale empties it between points):
// the server whose folders went is replaced, and NVRTC never sees a missing PCH folder.
TEST_F(CompileServerTest, ServerWhoseFolderWasRemovedIsReplaced) {
  ScopedEnv pch(detail::kCompileServerEnvVar, "pch");
  const auto source = example_source("hgemm_naive.cu");
  auto compiler = out_of_process("emptied");
  ASSERT_EQ(compiler.compile(variant(source, "before-emptied")).status, Status::ok);
  std::filesystem::remove_all(dir_->path() / "emptied");
  const auto after = compiler.compile(variant(source, "after-emptied"));
  EXPECT_EQ(after.status, Status::ok) << after.reason << "\n" << after.info.log;
  EXPECT_EQ(CompileServers::instance().stats().started, 2);
  EXPECT_EQ(CompileServers::instance().stats().live, 1);
}

TEST_F(CompileServerTest, ManyThreadsCompileDistinctSourcesOnAtMostThePoolsServers) {
  constexpr int kServers = 2, kThreads = 6;
  CompileServers::instance().configure({kServers, detail::kCompileServerRecycleAfter});
  const auto source = example_source("hgemm_naive.cu");
  auto compiler = out_of_process("many");
  std::vector<CompileOutput> outs(kThreads);
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i)
    threads.emplace_back([&, i] { outs[i] = compiler.compile(variant(source, "many" + std::to_string(i))); });
  for (auto& t : threads) t.join();
  for (const auto& o : outs) EXPECT_EQ(o.status, Status::ok) << o.reason << "\n" << o.info.log;
  const auto s = CompileServers::instance().stats();
  EXPECT_EQ(s.answered, kThreads);
  EXPECT_LE(s.peak_live, kServers);
  EXPECT_GE(s.started, 1);
  EXPECT_LE(s.started, kServers);
  EXPECT_EQ(s.max_servers, kServers);
}

TEST_F(CompileServerTest, PlantedCrashIsACompileErrorAndTheNextCompileGetsAFreshServer) {
  ScopedEnv faults(detail::kCompileServerFaultsEnvVar, detail::kCompileServerFaultsValue);
  CompileServers::instance().configure({});  // servers started from now on see the variable
  const auto source = example_source("hgemm_naive.cu");
  auto compiler = out_of_process("crash");
  ASSERT_EQ(compiler.compile(variant(source, "before")).status, Status::ok);
  const auto crashed = compiler.compile(variant(source + "\n// " + detail::kCompileServerCrashMarker, "crash"));
  EXPECT_EQ(crashed.status, Status::compile_error);
  EXPECT_NE(crashed.reason.find("compiler process died (exit code 134) without a result"), std::string::npos)
      << crashed.reason;  // 128 + SIGABRT
  EXPECT_EQ(CompileServers::instance().stats().started, 1);
  const auto after = compiler.compile(variant(source, "after"));
  EXPECT_EQ(after.status, Status::ok) << after.reason;
  EXPECT_EQ(CompileServers::instance().stats().started, 2);
  EXPECT_EQ(CompileServers::instance().stats().live, 1);  // the crashed one was reaped
}

TEST_F(CompileServerTest, PlantedHangTimesOutWithinTheLimitAndTheNextCompileSucceeds) {
  ScopedEnv faults(detail::kCompileServerFaultsEnvVar, detail::kCompileServerFaultsValue);
  CompileServers::instance().configure({});
  constexpr double kLimit = 3;
  const auto source = example_source("hgemm_naive.cu");
  auto compiler = out_of_process("hang", kLimit);
  const auto t0 = std::chrono::steady_clock::now();
  const auto hung = compiler.compile(variant(source + "\n// " + detail::kCompileServerHangMarker, "hang"));
  const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(hung.status, Status::timeout) << hung.reason;
  EXPECT_EQ(hung.reason, "compile exceeded its 3 s limit");
  EXPECT_GE(waited, kLimit);
  EXPECT_LT(waited, kLimit + 2);
  const auto after = compiler.compile(variant(source, "after-hang"));
  EXPECT_EQ(after.status, Status::ok) << after.reason;
  EXPECT_EQ(CompileServers::instance().stats().started, 2);
  EXPECT_EQ(CompileServers::instance().stats().live, 1);
}

TEST_F(CompileServerTest, ServerIsRecycledAfterItsCompiles) {
  CompileServers::instance().configure({1, 3});
  const auto source = example_source("hgemm_naive.cu");
  auto compiler = out_of_process("recycle");
  for (int i = 0; i < 7; ++i)
    ASSERT_EQ(compiler.compile(variant(source, "recycle" + std::to_string(i))).status, Status::ok);
  const auto s = CompileServers::instance().stats();
  EXPECT_EQ(s.answered, 7);
  EXPECT_EQ(s.started, 3);  // compiles 1-3, 4-6, 7
  EXPECT_EQ(s.recycled, 2);
  EXPECT_EQ(s.peak_live, 1);
}

// A server idle for longer than the limit is closed at the next request
// (its memory back to the machine); one used within the limit is reused.
TEST_F(CompileServerTest, IdleServerIsClosedAtTheNextRequestAndABusyOneKept) {
  constexpr double kIdle = 0.3;
  const auto source = example_source("hgemm_naive.cu");
  auto compiler = out_of_process("idle");
  const auto compile_after = [&](const std::string& tag, double pause_s) {
    std::this_thread::sleep_for(std::chrono::duration<double>(pause_s));
    ASSERT_EQ(compiler.compile(variant(source, tag)).status, Status::ok);
  };
  CompileServers::instance().configure({1, detail::kCompileServerRecycleAfter, kIdle});
  compile_after("idle1", 0);
  compile_after("idle2", 0);            // at once: the same server
  compile_after("idle3", 3 * kIdle);    // idle past the limit: closed, a fresh one answers
  auto s = CompileServers::instance().stats();
  EXPECT_EQ(s.answered, 3);
  EXPECT_EQ(s.started, 2);
  EXPECT_EQ(s.closed_idle, 1);
  EXPECT_EQ(s.live, 1);

  CompileServers::instance().configure({1, detail::kCompileServerRecycleAfter, 0});  // 0: never closed
  compile_after("never1", 0);
  compile_after("never2", 3 * kIdle);
  s = CompileServers::instance().stats();
  EXPECT_EQ(s.started, 1);
  EXPECT_EQ(s.closed_idle, 0);
}

// A forked copy of a process with servers (a trainer's worker processes)
// compiles in one-shot children: it never writes to its parent's servers.
TEST_F(CompileServerTest, AForkedProcessCompilesWithoutItsParentsServers) {
  const auto source = example_source("hgemm_naive.cu");
  auto compiler = out_of_process("forked");
  ASSERT_EQ(compiler.compile(variant(source, "parent")).status, Status::ok);
  ASSERT_EQ(CompileServers::instance().stats().live, 1);
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    const auto out = compiler.compile(variant(source, "child"));
    const auto s = CompileServers::instance().stats();
    ::_exit(out.status == Status::ok && s.answered == 1 && s.started == 1 ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the child's compile failed or used a server";
  ASSERT_EQ(compiler.compile(variant(source, "parent-again")).status, Status::ok);
  const auto s = CompileServers::instance().stats();
  EXPECT_EQ(s.answered, 2) << "the parent's server answered the parent only";
  EXPECT_EQ(s.started, 1);
}

TEST_F(CompileServerTest, OffCompilesInAProcessPerCompile) {
  ScopedEnv off(detail::kCompileServerEnvVar, "off");
  const auto request = variant(example_source("hgemm_naive.cu"), "off");
  const auto here = in_process_as("off", request);
  const auto child = out_of_process("off").compile(request);
  ASSERT_EQ(child.status, Status::ok) << child.reason;
  EXPECT_EQ(read_file(here.artifact), read_file(child.artifact));
  const auto s = CompileServers::instance().stats();
  EXPECT_EQ(s.started, 0);
  EXPECT_EQ(s.answered, 0);
}

TEST_F(CompileServerTest, TranslationUnitsStayOneShotChildren) {
  const auto c = load_candidate(std::string(TESSERA_SOURCE_DIR) + "/examples/hgemm_tu.cu");
  const auto out = out_of_process("tu").compile({c.kind, c.source, "sm_90a", {}});
  EXPECT_EQ(out.status, Status::ok) << out.reason << "\n" << out.info.log;
  EXPECT_EQ(CompileServers::instance().stats().started, 0);
}

// The serve loop itself: answers every line, in order, and exits at EOF.
TEST(CompileServe, AnswersEachRequestLineAndExitsAtEndOfInput) {
  ScratchDir dir(std::filesystem::temp_directory_path(), "tessera-compile-serve-test-");
  std::string input;
  for (const char* tag : {"a", "b"}) {
    const CompileChildRequest req{variant(example_source("hgemm_naive.cu"), tag), dir.path() / "cache",
                                  std::string("key") + tag, 60};
    input += nlohmann::json(req).dump() + "\n";
  }
  const auto r = run_process(TESSERA_BINARY, {"__compile", "--serve"}, input, 120, 1 << 20, dir.path());
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  int answers = 0;
  std::size_t at = 0;
  while ((at = r.output.find("{\"TESSERA_COMPILE\":", at)) != std::string::npos) {
    const auto end = r.output.find('\n', at);
    const auto out = nlohmann::json::parse(r.output.substr(at, end - at)).at("TESSERA_COMPILE").get<CompileOutput>();
    EXPECT_EQ(out.status, Status::ok) << out.reason;
    EXPECT_EQ(out.artifact, dir.path() / "cache" / (std::string(answers == 0 ? "keya" : "keyb") + ".cubin"));
    ++answers;
    at = end;
  }
  EXPECT_EQ(answers, 2) << r.output;
}

}  // namespace
}  // namespace tessera
