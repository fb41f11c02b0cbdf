// The machine-wide lock (core/file_lock.hpp): another process holding it
// makes a taker wait, letting go (or dying) frees it, and two descriptors of
// one process conflict as two processes do (flock locks belong to the open
// file description, not to the process).
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "core/error.hpp"
#include "core/file_lock.hpp"

namespace tessera {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

class FileLockTest : public ::testing::Test {
protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("tessera_file_lock_" + std::to_string(std::random_device{}()));
    path_ = dir_ / "gpu.lock";
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  // A child process that takes the lock on its own descriptor, says so on a
  // pipe, holds it for `hold` (then unlocks and lingers for `linger` before
  // exiting), or until killed when `hold` is negative.
  pid_t child_holding(milliseconds hold, milliseconds linger = milliseconds(0)) {
    int p[2];
    if (::pipe(p) != 0) throw std::runtime_error("pipe");
    const pid_t pid = ::fork();
    if (pid == 0) {
      ::close(p[0]);
      FileLock lock(path_);
      lock.lock();
      const char c = 'h';
      (void)!::write(p[1], &c, 1);
      if (hold.count() < 0) {
        for (;;) ::pause();
      }
      std::this_thread::sleep_for(hold);
      lock.unlock();
      std::this_thread::sleep_for(linger);
      ::_exit(0);
    }
    ::close(p[1]);
    char c = 0;
    const bool held = ::read(p[0], &c, 1) == 1;
    ::close(p[0]);
    if (!held) throw std::runtime_error("the child did not take the lock");
    return pid;
  }

  static int exit_code(pid_t pid) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

  fs::path dir_, path_;
};

TEST_F(FileLockTest, TwoLocksOnOnePathConflictEvenInOneProcess) {
  FileLock a(path_), b(path_);
  ASSERT_TRUE(a.try_lock());
  EXPECT_TRUE(a.owns_lock());
  EXPECT_FALSE(b.try_lock()) << "a second open file description of one process is refused as another process's is";
  EXPECT_FALSE(b.owns_lock());
  a.unlock();
  EXPECT_FALSE(a.owns_lock());
  EXPECT_TRUE(b.try_lock());
  // Which thread asks does not matter, only which description holds it.
  std::thread([&] { EXPECT_FALSE(a.try_lock()); }).join();
}

TEST_F(FileLockTest, TheSecondWaitsUntilTheFirstLetsGoAndIsKeptAliveMeanwhile) {
  const pid_t child = child_holding(milliseconds(400), milliseconds(1500));
  FileLock mine(path_);
  EXPECT_FALSE(mine.try_lock());
  int beats = 0;
  const auto t0 = Clock::now();
  mine.lock([&] { ++beats; }, milliseconds(20));
  const auto waited = std::chrono::duration_cast<milliseconds>(Clock::now() - t0);
  EXPECT_TRUE(mine.owns_lock());
  EXPECT_GE(waited.count(), 300) << "it waited for the holder";
  EXPECT_LT(waited.count(), 1300) << "the holder's unlock freed it, not the holder's exit";
  EXPECT_GE(beats, 5) << "the keep-alive was called while it waited";
  EXPECT_EQ(exit_code(child), 0);
}

TEST_F(FileLockTest, AProcessKilledWhileHoldingItLetsItGo) {
  const pid_t child = child_holding(milliseconds(-1));
  FileLock mine(path_);
  EXPECT_FALSE(mine.try_lock());
  ASSERT_EQ(::kill(child, SIGKILL), 0);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFSIGNALED(status));
  EXPECT_TRUE(mine.try_lock()) << "the kernel let the dead holder's lock go";
}

TEST_F(FileLockTest, AKeepAliveThatThrowsEndsTheWaitWithoutTheLock) {
  const pid_t child = child_holding(milliseconds(300));
  FileLock mine(path_);
  EXPECT_THROW(mine.lock([] { throw std::runtime_error("the caller is gone"); }, milliseconds(10)),
               std::runtime_error);
  EXPECT_FALSE(mine.owns_lock());
  FileLock other(path_);
  EXPECT_TRUE(other.try_lock()) << "the lock the given-up wait took was let go";
  EXPECT_EQ(exit_code(child), 0);
}

TEST_F(FileLockTest, TheFolderIsCreatedWhenMissingAndSharedAcrossUsers) {
  const fs::path nested = dir_ / "a" / "locks" / "x.lock";
  {
    FileLock lock(nested, true);
    EXPECT_TRUE(lock.try_lock());
  }
  ASSERT_TRUE(fs::is_directory(nested.parent_path()));
  struct stat st{};
  ASSERT_EQ(::stat(nested.parent_path().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 01777u) << "any user may add a lock file, only its owner remove it";
  ASSERT_EQ(::stat(nested.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0666u) << "any user may open it";
  // A private one keeps the umask's modes.
  FileLock own(dir_ / "b" / "y.lock");
  EXPECT_TRUE(fs::exists(dir_ / "b" / "y.lock"));
}

TEST_F(FileLockTest, AFileThatCannotBeOpenedIsAnErrorNamingIt) {
  try {
    FileLock lock("/dev/null/locks/x.lock");
    FAIL() << "opened a file under /dev/null";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), Error::Kind::unavailable);
    EXPECT_NE(std::string(e.what()).find("/dev/null/locks"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tessera
