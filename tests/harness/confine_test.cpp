// Confinement, tried for real in forked children: what the worker and the
// runner policies stop, and how. A check whose layer the kernel lacks is
// skipped, naming the reason the child's report gives (doctor prints it too).
#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <thread>

#include "confine/confine.hpp"
#include "tests/harness/confine_helpers.hpp"

extern char** environ;

namespace tessera {
namespace {

using testing::run_confined;

class ConfineTest : public ::testing::Test {
protected:
  void SetUp() override {
    base_.emplace(std::filesystem::temp_directory_path(), "tessera-confine-test-");
    scratch_ = base_->path() / "scratch";
    outside_ = base_->path() / "outside";
    extra_ = base_->path() / "cache";
    for (const auto& d : {scratch_, outside_, extra_}) std::filesystem::create_directories(d);
    std::ofstream(outside_ / "secret.txt") << "planted secret\n";
  }
  std::optional<ScratchDir> base_;
  std::filesystem::path scratch_, outside_, extra_;
};

bool can_create(const std::filesystem::path& p) {
  const int fd = ::open(p.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd >= 0) ::close(fd);
  return fd >= 0;
}
bool can_read(const std::filesystem::path& p) {
  const int fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd >= 0) ::close(fd);
  return fd >= 0;
}
bool socket_refused() {
  const int s = ::socket(AF_INET, SOCK_STREAM, 0);
  if (s >= 0) ::close(s);
  return s < 0 && errno == EPERM;
}
bool thread_runs() {
  int v = 0;
  std::thread([&] { v = 1; }).join();
  return v == 1;
}

// Bits a child returns: what it found refused (or working, for the last ones).
enum : int { kSocket = 1, kWriteOutside = 2, kSignalParent = 4, kFork = 8, kReadOutside = 16, kWorks = 32 };

TEST_F(ConfineTest, WorkerPolicyStopsSocketsSignalsToItsParentAndWritesOutside) {
  const auto r = run_confined(worker_policy(scratch_, {extra_}), [&] {
    int found = 0;
    if (socket_refused()) found |= kSocket;
    if (!can_create(outside_ / "escape")) found |= kWriteOutside;
    if (::kill(::getppid(), 0) != 0) found |= kSignalParent;
    const pid_t child = ::fork();  // allowed: the worker starts the runner
    if (child == 0) ::_exit(0);
    if (child < 0) found |= kFork;
    else ::waitpid(child, nullptr, 0);
    const bool works = can_create(scratch_ / "ok") && can_create(extra_ / "entry") && ::kill(::getpid(), 0) == 0 &&
                       thread_runs() && can_read(outside_ / "secret.txt") && can_read("/proc/self/status");
    return found | (works ? kWorks : 0);
  });
  ASSERT_TRUE(WIFEXITED(r.status)) << r.err;
  EXPECT_TRUE(r.code() & kWorks) << "scratch, the cache, reads, signals to itself and threads must work\n" << r.err;
  EXPECT_FALSE(r.code() & kFork) << "the worker must be able to start its runner";
  if (!r.report.seccomp) GTEST_SKIP() << "no seccomp here: " << r.report.notes;
  EXPECT_TRUE(r.code() & kSocket);
  EXPECT_TRUE(r.code() & kSignalParent);
  if (!r.report.landlock) GTEST_SKIP() << "no Landlock here: " << r.report.notes;
  EXPECT_TRUE(r.code() & kWriteOutside);
  // Reads are not restricted for the worker (its runner, which inherits the
  // domain, must read its own /proc entries, which do not exist yet): the
  // runner's policy is the one that keeps the harness's environ out of reach.
}

TEST_F(ConfineTest, RunnerPolicyConfinesReadsWritesAndOtherProcesses) {
  const std::string parent_environ = "/proc/" + std::to_string(::getpid()) + "/environ";
  const auto r = run_confined(runner_policy(scratch_, {}), [&] {
    int found = 0;
    if (!can_create(outside_ / "escape")) found |= kWriteOutside;
    // The secret file, and the harness's environment (where API keys live).
    if (!can_read(outside_ / "secret.txt") && !can_read(parent_environ)) found |= kReadOutside;
    const bool works = can_create(scratch_ / "ok") && can_read(scratch_ / "ok") && can_read("/etc/passwd") &&
                       can_read("/proc/self/maps") && can_read("/proc/cpuinfo") && ::kill(::getpid(), 0) == 0 &&
                       thread_runs();
    return found | (works ? kWorks : 0);
  });
  ASSERT_TRUE(WIFEXITED(r.status)) << "nothing here is a forbidden call\n" << r.err;
  EXPECT_TRUE(r.code() & kWorks) << "its scratch, system files, itself and threads must work\n" << r.err;
  if (!r.report.landlock) GTEST_SKIP() << "no Landlock here: " << r.report.notes;
  EXPECT_TRUE(r.code() & kWriteOutside);
  EXPECT_TRUE(r.code() & kReadOutside);
}

// Each forbidden act kills the runner with SIGSYS and names the call, which
// is how the worker tells a `rejected` candidate from a crashed one.
TEST_F(ConfineTest, RunnerDiesOfSigsysNamingTheForbiddenCall) {
  struct Act {
    const char* what;
    // As the SIGSYS message names it; "" where no message can come:
    // posix_spawn blocks every signal around its clone, so the kernel kills
    // the process without running the handler.
    const char* call;
    std::function<int()> run;
  };
  const std::vector<Act> acts = {
      {"socket", "socket", [] { return ::socket(AF_INET, SOCK_STREAM, 0) >= 0 ? 0 : 1; }},
      // A child that did start (no seccomp) leaves at once.
      {"fork", "clone", [] {
         const pid_t p = ::fork();
         if (p == 0) ::_exit(0);
         return p > 0 ? 0 : 1;
       }},
      {"vfork", "vfork", [] {
         const pid_t p = ::vfork();
         if (p == 0) ::_exit(0);
         return p > 0 ? 0 : 1;
       }},
      {"clone syscall", "clone", [] {
         const long p = ::syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0);
         if (p == 0) ::_exit(0);
         return p > 0 ? 0 : 1;
       }},
      {"posix_spawn", "", [] {
         pid_t pid;
         char* argv[] = {const_cast<char*>("/bin/true"), nullptr};
         return ::posix_spawn(&pid, "/bin/true", nullptr, nullptr, argv, environ) == 0 ? 0 : 1;
       }},
      {"execve", "execve", [] {
         char* argv[] = {const_cast<char*>("/bin/true"), nullptr};
         return ::execve("/bin/true", argv, environ);
       }},
      {"signal to the parent", "kill", [] { return ::kill(::getppid(), 0); }},
      {"ptrace", "ptrace", [] { return static_cast<int>(::syscall(SYS_ptrace, 0, ::getppid(), 0, 0)); }},
  };
  for (const auto& a : acts) {
    const auto r = run_confined(runner_policy(scratch_, {}), a.run);
    if (!r.report.seccomp) GTEST_SKIP() << "no seccomp here: " << r.report.notes;
    EXPECT_TRUE(r.killed_by(SIGSYS)) << a.what << ": status " << r.status << "\n" << r.err;
    const std::string reason = confinement_exit_reason(r.status, r.err);
    EXPECT_NE(reason.find(kForbiddenSyscallReason), std::string::npos) << a.what << ": " << reason;
    if (*a.call) {
      EXPECT_NE(reason.find(std::string("(") + a.call + ")"), std::string::npos) << a.what << ": " << reason;
    }
  }
}

// A crash is not a confinement verdict: abort() signals the process itself
// (tgkill to its own pid), which the runner may do.
TEST_F(ConfineTest, RunnerThatAbortsIsACrashNotAViolation) {
  const auto r = run_confined(runner_policy(scratch_, {}), [] {
    ::signal(SIGABRT, SIG_DFL);
    ::abort();
    return 0;
  });
  EXPECT_TRUE(r.killed_by(SIGABRT)) << "status " << r.status << "\n" << r.err;
  EXPECT_EQ(confinement_exit_reason(r.status, r.err), "");
}

TEST_F(ConfineTest, TurnedOffByTheUserInstallsNothingAndSaysSo) {
  testing::ScopedEnv off(kConfineEnvVar, "0");
  const auto r = run_confined(runner_policy(scratch_, {}), [] { return socket_refused() ? 1 : 0; });
  EXPECT_EQ(r.code(), 0) << "sockets work when confinement is off\n" << r.err;
  EXPECT_FALSE(r.report.seccomp);
  EXPECT_FALSE(r.report.landlock);
  EXPECT_NE(r.report.notes.find(kConfineEnvVar), std::string::npos) << r.report.notes;
}

TEST_F(ConfineTest, ExitReasonsNameTheLimitThatStoppedTheProcess) {
  auto died_of = [](int sig) {
    const pid_t pid = ::fork();
    if (pid == 0) {
      ::signal(sig, SIG_DFL);
      ::raise(sig);
      ::_exit(0);
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    return status;
  };
  EXPECT_EQ(confinement_exit_reason(died_of(SIGXFSZ), ""), kFileSizeLimitReason);
  EXPECT_EQ(confinement_exit_reason(died_of(SIGSYS), "noise\ntessera: forbidden system call socket\n"),
            std::string(kForbiddenSyscallReason) + " (socket)");
  EXPECT_EQ(confinement_exit_reason(died_of(SIGSEGV), ""), "") << "a crash is not a confinement verdict";
  EXPECT_EQ(confinement_exit_reason(0, ""), "");
}

TEST_F(ConfineTest, ProbeAgreesWithWhatTheKernelOffers) {
  const ProbeResult p = probe_protections();
  ASSERT_TRUE(p.error.empty()) << p.error;
  EXPECT_TRUE(p.report.rlimits) << p.report.notes;
  EXPECT_TRUE(p.report.own_session) << p.report.notes;
  if (p.report.seccomp) {
    EXPECT_TRUE(p.socket_blocked);
    EXPECT_TRUE(p.fork_blocked);
    EXPECT_TRUE(p.signal_parent_blocked);
  }
  if (p.report.landlock) {
    EXPECT_TRUE(p.write_outside_blocked);
  }
  if (!p.report.seccomp || !p.report.landlock) std::printf("note: this kernel lacks a layer: %s\n", p.report.notes.c_str());
}

TEST(ScratchDir, IsPrivateAndRemovedWithItsContents) {
  std::filesystem::path kept;
  {
    ScratchDir d(std::filesystem::temp_directory_path(), "tessera-scratch-test-");
    kept = d.path();
    std::filesystem::create_directories(kept / "a" / "b");
    std::ofstream(kept / "a" / "b" / "f") << "x";
    const auto perms = std::filesystem::status(kept).permissions();
    EXPECT_EQ(perms & (std::filesystem::perms::group_all | std::filesystem::perms::others_all),
              std::filesystem::perms::none);
  }
  EXPECT_FALSE(std::filesystem::exists(kept));
}

}  // namespace
}  // namespace tessera
