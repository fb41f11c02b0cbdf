// The worker's per-GPU lock (worker/gpu_lock.hpp) without a GPU: its file
// is named by the UUID in the folder the environment names, a wait is
// announced as its own phase and kept alive, the environment turns it off,
// and the worker's sandbox passes both variables on.
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "confine/confine.hpp"
#include "core/error.hpp"
#include "core/file_lock.hpp"
#include "worker/gpu_lock.hpp"
#include "tests/testing.hpp"

namespace tessera::worker {
namespace {

using ::tessera::testing::ScopedEnv;

namespace fs = std::filesystem;
using std::chrono::milliseconds;

constexpr const char* kUuid = "GPU-00000000-1111-2222-3333-444444444444";

class GpuLockTest : public ::testing::Test {
protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("tessera_gpu_lock_" + std::to_string(std::random_device{}()));
    dir_env_.emplace(kGpuLockDirEnvVar, dir_.c_str());
  }
  void TearDown() override {
    dir_env_.reset();
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  fs::path dir_;
  std::optional<ScopedEnv> dir_env_;
};

TEST_F(GpuLockTest, TheFileIsNamedByTheUuidInTheFolderTheEnvironmentNames) {
  ScopedEnv on(kGpuLockEnvVar, nullptr);
  EXPECT_EQ(gpu_lock_path(kUuid), dir_ / (std::string(kUuid) + ".lock"));
  GpuLock lock(kUuid);
  EXPECT_TRUE(lock.enabled());
  EXPECT_TRUE(fs::exists(dir_ / (std::string(kUuid) + ".lock"))) << "opened (created) up front, before confinement";
}

TEST_F(GpuLockTest, WithoutTheVariableTheFolderIsTheMachineWideDefault) {
  ScopedEnv unset(kGpuLockDirEnvVar, nullptr);
  EXPECT_EQ(gpu_lock_dir(), fs::path("/tmp/tessera-gpu-locks"));
}

TEST_F(GpuLockTest, ARelativeFolderIsRefused) {
  ScopedEnv relative(kGpuLockDirEnvVar, "locks");
  EXPECT_THROW(gpu_lock_dir(), Error) << "a worker runs in its own scratch folder: a relative one would share nothing";
}

TEST_F(GpuLockTest, AWaitIsItsOwnPhaseKeptAliveAndLoggedWithItsTimes) {
  ScopedEnv on(kGpuLockEnvVar, nullptr);
  GpuLock lock(kUuid);
  // Another holder: a second open file description conflicts as another
  // process's would (tests/core/file_lock_test.cpp).
  FileLock other(gpu_lock_path(kUuid));
  ASSERT_TRUE(other.try_lock());
  std::thread release([&] {
    std::this_thread::sleep_for(milliseconds(350));
    other.unlock();
  });
  std::vector<std::string> beats;
  ::testing::internal::CaptureStderr();
  {
    GpuLock::Scope scope(lock, [&](const std::string& what) { beats.push_back(what); }, "eval");
    EXPECT_TRUE(scope.waited());
    // A third holder asks, not `other`: the release thread may still be
    // inside other.unlock() (the flock let go, its own flag not yet cleared),
    // where other.try_lock() would answer from that flag.
    FileLock probe(gpu_lock_path(kUuid));
    EXPECT_FALSE(probe.try_lock()) << "the scope holds the GPU";
  }
  const std::string log = ::testing::internal::GetCapturedStderr();
  release.join();
  ASSERT_GE(beats.size(), 2u);
  EXPECT_EQ(beats.front(), kGpuWaitPhase);
  for (std::size_t i = 1; i < beats.size(); ++i) EXPECT_EQ(beats[i], "") << "keep-alives keep the phase";
  EXPECT_GE(beats.size(), 3u) << "one keep-alive per 100 ms of a 350 ms wait";
  const auto hold = parse_gpu_hold_log_line(log.substr(0, log.find('\n')));
  ASSERT_TRUE(hold) << log;
  EXPECT_EQ(hold->what, "eval");
  EXPECT_GE(hold->waited_ms, 300);
  EXPECT_LE(hold->acquired_us, hold->released_us);
  EXPECT_TRUE(other.try_lock()) << "the scope let it go";
}

TEST_F(GpuLockTest, AFreeGpuIsTakenWithoutAWaitOrAHeartbeat) {
  ScopedEnv on(kGpuLockEnvVar, nullptr);
  GpuLock lock(kUuid);
  int beats = 0;
  ::testing::internal::CaptureStderr();
  {
    GpuLock::Scope scope(lock, [&](const std::string&) { ++beats; }, "ceiling");
    EXPECT_FALSE(scope.waited());
  }
  const auto hold = parse_gpu_hold_log_line(::testing::internal::GetCapturedStderr());
  EXPECT_EQ(beats, 0);
  ASSERT_TRUE(hold);
  EXPECT_EQ(hold->what, "ceiling");
}

TEST_F(GpuLockTest, OffByTheEnvironmentItHoldsNothing) {
  for (const char* off : {"off", "0"}) {
    ScopedEnv disabled(kGpuLockEnvVar, off);
    EXPECT_FALSE(gpu_lock_disabled_reason().empty()) << off;
    GpuLock lock(kUuid);
    EXPECT_FALSE(lock.enabled());
    EXPECT_FALSE(fs::exists(gpu_lock_path(kUuid))) << "no file is even opened";
    int beats = 0;
    GpuLock::Scope scope(lock, [&](const std::string&) { ++beats; }, "eval");
    EXPECT_FALSE(scope.waited());
    EXPECT_EQ(beats, 0);
  }
  ScopedEnv on(kGpuLockEnvVar, "on");
  EXPECT_TRUE(gpu_lock_disabled_reason().empty()) << "only off (or 0) turns it off";
}

TEST_F(GpuLockTest, TheSandboxPassesTheVariablesToTheWorker) {
  EXPECT_TRUE(is_inherited_name(kGpuLockEnvVar));
  EXPECT_TRUE(is_inherited_name(kGpuLockDirEnvVar));
}

TEST(GpuHoldLogLine, ReadsBackWhatItWrote) {
  const GpuHold h{1700000000123456, 1700000001123456, 12.5, "eval"};
  const auto back = parse_gpu_hold_log_line(gpu_hold_log_line(kUuid, h));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->acquired_us, h.acquired_us);
  EXPECT_EQ(back->released_us, h.released_us);
  EXPECT_DOUBLE_EQ(back->waited_ms, h.waited_ms);
  EXPECT_EQ(back->what, h.what);
  EXPECT_FALSE(parse_gpu_hold_log_line("worker protections: {}"));
}

}  // namespace
}  // namespace tessera::worker
