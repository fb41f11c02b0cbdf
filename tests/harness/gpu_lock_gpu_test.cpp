// Two processes evaluating on one GPU take turns (worker/gpu_lock.hpp; docs/
// harness.md, "Several processes on one machine"): two `tessera eval`
// processes, as two trainers would, each with its own sandbox and worker.
// The test holds the GPU's lock first, until both workers are seen blocked
// on it (/proc/locks), and past the silence limit: both results are then ok
// with the wait in phase_ms.gpu_wait, and the locked intervals their workers
// log never overlap. Skips without a GPU.
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/file_lock.hpp"
#include "tests/testing.hpp"
#include "worker/device_summary.hpp"
#include "worker/gpu_lock.hpp"

namespace tessera {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr int kRunTimeoutSeconds = 5;          // the children's silence limit; the test holds the GPU longer
constexpr int kHoldPastLimitSeconds = 7;       // how long the test keeps both waiting once they wait
constexpr int kReachLockTimeoutSeconds = 240;  // two worker starts and a first nvcc compile

std::string text_of(const fs::path& p) {
  std::ifstream in(p);
  return {std::istreambuf_iterator<char>(in), {}};
}

std::int64_t now_us() {
  return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// Processes blocked in flock() on `file`, from /proc/locks: lines
// "N: -> FLOCK ADVISORY WRITE pid maj:min:inode 0 EOF".
int flock_waiters(const fs::path& file) {
  struct stat st{};
  if (::stat(file.c_str(), &st) != 0) return 0;
  const std::string inode = fmt::format(":{}", st.st_ino);
  std::istringstream locks(text_of("/proc/locks"));
  int n = 0;
  for (std::string line; std::getline(locks, line);) {
    std::istringstream f(line);
    std::string index, arrow, kind, mode, access, pid, where;
    f >> index >> arrow >> kind >> mode >> access >> pid >> where;
    if (arrow == "->" && kind == "FLOCK" && where.size() > inode.size() &&
        where.compare(where.size() - inode.size(), inode.size(), inode) == 0)
      ++n;
  }
  return n;
}

// One `tessera eval --json` in a child process: stdout and stderr to files,
// its sandbox's worker logs into `logs`.
struct EvalProcess {
  pid_t pid = -1;
  fs::path out, err, logs;
};

EvalProcess start_eval(const fs::path& dir, const std::string& name) {
  EvalProcess p{-1, dir / (name + ".json"), dir / (name + ".err"), dir / (name + "-logs")};
  fs::create_directories(p.logs);
  const nlohmann::json options = {{"log_dir", p.logs.string()}, {"measure_peak", false}};
  const std::string cmd = "exec timeout 600 " + std::string(TESSERA_BINARY) + " eval " +
                          std::string(TESSERA_SOURCE_DIR) + "/examples/hgemm_naive.cu --shape 256x256x256 --no-counters --json --run-timeout " +
                          std::to_string(kRunTimeoutSeconds) + " --sandbox-options '" + options.dump() + "' > " +
                          p.out.string() + " 2> " + p.err.string();
  p.pid = ::fork();
  if (p.pid == 0) {
    ::execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  return p;
}

int wait_exit(const EvalProcess& p) {
  int status = 0;
  if (::waitpid(p.pid, &status, 0) != p.pid) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// The evaluations' holds of the GPU, from the worker logs of one process.
std::vector<worker::GpuHold> eval_holds(const fs::path& logs) {
  std::vector<worker::GpuHold> out;
  for (const auto& e : fs::directory_iterator(logs)) {
    std::istringstream in(text_of(e.path()));
    for (std::string line; std::getline(in, line);)
      if (auto h = worker::parse_gpu_hold_log_line(line); h && h->what == "eval") out.push_back(*h);
  }
  return out;
}

TEST(GpuLockGpu, TwoProcessesOnOneGpuTakeTurns) {
  TESSERA_REQUIRE_GPU();
  const fs::path dir = fs::temp_directory_path() / ("tessera_gpu_lock_gpu_" + std::to_string(std::random_device{}()));
  fs::create_directories(dir);
  // A folder of the test's own: other tests on this GPU keep the default one.
  ASSERT_EQ(::setenv(worker::kGpuLockDirEnvVar, (dir / "locks").c_str(), 1), 0);
  ASSERT_EQ(::unsetenv(worker::kGpuLockEnvVar), 0);
  const std::string uuid = worker::device_summary(0).uuid;  // what the children's workers on device 0 see
  FileLock gpu(worker::gpu_lock_path(uuid), true);
  ASSERT_TRUE(gpu.try_lock());

  std::vector<EvalProcess> procs = {start_eval(dir, "a"), start_eval(dir, "b")};
  const auto t0 = Clock::now();
  while (flock_waiters(gpu.path()) < 2 && Clock::now() - t0 < std::chrono::seconds(kReachLockTimeoutSeconds))
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const bool both_waited = flock_waiters(gpu.path()) >= 2;
  if (both_waited) std::this_thread::sleep_for(std::chrono::seconds(kHoldPastLimitSeconds));
  const std::int64_t released_us = now_us();
  gpu.unlock();
  std::vector<int> codes;
  for (const auto& p : procs) codes.push_back(wait_exit(p));
  ::unsetenv(worker::kGpuLockDirEnvVar);
  ASSERT_TRUE(both_waited) << "two workers were not seen waiting for the GPU within " << kReachLockTimeoutSeconds
                           << " s\n" << text_of(procs[0].err) << "\n" << text_of(procs[1].err);

  std::vector<std::vector<worker::GpuHold>> holds;
  for (std::size_t i = 0; i < procs.size(); ++i) {
    const auto& p = procs[i];
    ASSERT_EQ(codes[i], 0) << text_of(p.err);
    const auto r = nlohmann::json::parse(text_of(p.out), nullptr, false);
    ASSERT_FALSE(r.is_discarded()) << text_of(p.out) << text_of(p.err);
    EXPECT_EQ(r.value("status", ""), "ok") << r.value("reason", "");
    const double waited = r.value("phase_ms", nlohmann::json::object()).value(worker::kGpuWaitPhase, 0.0);
    EXPECT_GE(waited, kHoldPastLimitSeconds * 1000.0) << "the wait is its own phase, longer than the silence limit";
    holds.push_back(eval_holds(p.logs));
    ASSERT_FALSE(holds.back().empty()) << "no 'gpu lock' line in " << p.logs;
    for (const auto& h : holds.back())
      EXPECT_GE(h.acquired_us, released_us) << "it took the GPU while the test held it";
  }
  for (const auto& a : holds[0])
    for (const auto& b : holds[1])
      EXPECT_TRUE(a.released_us <= b.acquired_us || b.released_us <= a.acquired_us)
          << "overlap: [" << a.acquired_us << ", " << a.released_us << "] and [" << b.acquired_us << ", "
          << b.released_us << "]";
  std::error_code ec;
  fs::remove_all(dir, ec);
}

}  // namespace
}  // namespace tessera
