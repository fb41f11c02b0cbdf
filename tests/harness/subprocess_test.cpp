// run_process starts compile children (tessera __compile, nvcc) with
// posix_spawn: what the harness relies on from it, checked on real programs.
#include <gtest/gtest.h>

#include <signal.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "confine/confine.hpp"
#include "harness/subprocess.hpp"

namespace tessera {
namespace {

// Killed but not reaped yet (a container's init may never reap it).
bool is_zombie(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return true;
  const auto close = line.rfind(')');
  return close != std::string::npos && close + 2 < line.size() && line[close + 2] == 'Z';
}

ScratchDir scratch() { return ScratchDir(std::filesystem::temp_directory_path(), "tessera-subprocess-test-"); }

TEST(RunProcess, GivesStdinAndReadsStdoutThenStderrAndTheExitCode) {
  auto dir = scratch();
  const auto r = run_process("/bin/sh", {"-c", "read x; echo out:$x; echo err >&2; exit 7"}, "hello\n", 30, 1 << 20,
                             dir.path());
  EXPECT_FALSE(r.spawn_failed) << r.error;
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.exit_code, 7);
  EXPECT_EQ(r.output, "out:hello\nerr\n");
}

TEST(RunProcess, StartsInItsWorkFolder) {
  auto dir = scratch();
  const auto r = run_process("/bin/pwd", {}, "", 30, 1 << 20, dir.path());
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(std::filesystem::path(r.output.substr(0, r.output.find('\n'))), std::filesystem::canonical(dir.path()));
}

TEST(RunProcess, OutputPastTheLimitIsCutAndSaysSo) {
  auto dir = scratch();
  const auto r = run_process("/bin/sh", {"-c", "printf '%0100000d' 0"}, "", 30, 1000, dir.path());
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.output.rfind(std::string(1000, '0'), 0), 0u);
  EXPECT_NE(r.output.find("[output truncated: 100000 bytes in total]"), std::string::npos);
}

TEST(RunProcess, AProgramThatCannotStartIsASpawnFailureWithTheReason) {
  auto dir = scratch();
  const auto r = run_process("/nonexistent/compiler", {}, "", 30, 1 << 20, dir.path());
  EXPECT_TRUE(r.spawn_failed);
  EXPECT_NE(r.error.find("/nonexistent/compiler"), std::string::npos) << r.error;
}

TEST(RunProcess, ATimeoutKillsTheChildsWholeProcessGroup) {
  auto dir = scratch();
  const auto pidfile = dir.path() / "grandchild.pid";
  // The grandchild (as nvcc's cicc or ptxas) outlives its parent's shell unless its group is killed.
  const auto t0 = std::chrono::steady_clock::now();
  const auto r = run_process("/bin/sh", {"-c", "sleep 60 & echo $! > " + pidfile.string() + "; wait"}, "", 1, 1 << 20,
                             dir.path());
  EXPECT_TRUE(r.timed_out);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(30));
  std::ifstream in(pidfile);
  pid_t grandchild = 0;
  ASSERT_TRUE(in >> grandchild);
  bool gone = false;
  for (int i = 0; i < 200 && !gone; ++i) {  // killed, then reaped by init
    gone = ::kill(grandchild, 0) != 0 || is_zombie(grandchild);
    if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(gone) << "the grandchild " << grandchild << " survived the timeout";
}

}  // namespace
}  // namespace tessera
