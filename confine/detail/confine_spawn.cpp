// Starting a confined child: limits and session between fork and exec, a
// private scratch directory, and reading why a confined child died.
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <algorithm>
#include <cstring>
#include <fstream>
#include <string>

#include <fmt/format.h>

#include "confine/confine.hpp"
#include "core/error.hpp"

namespace tessera {

namespace {

constexpr int kFirstClosedFd = 3;  // 0, 1, 2 are set up; everything above is closed
// Child descriptors must be below this; sources are moved above it first.
constexpr int kMovedFdBase = 64;
constexpr std::size_t kMaxMappedFds = 16;
constexpr const char* kSigsysPrefix = "tessera: forbidden system call ";

int set_limit(int resource, std::uint64_t value) noexcept {
  const rlimit r{static_cast<rlim_t>(value), static_cast<rlim_t>(value)};
  return ::setrlimit(resource, &r) == 0 ? 0 : errno;
}

// Closes [first, last]: close_range(2) where the kernel has it (5.9+), else
// one by one up to the descriptor limit.
void close_range_of(int first, unsigned last) noexcept {
  if (first < 0 || static_cast<unsigned>(first) > last) return;
#ifdef SYS_close_range
  if (::syscall(SYS_close_range, first, last, 0) == 0) return;
#endif
  const long max = ::sysconf(_SC_OPEN_MAX);
  for (long fd = first; fd < max && static_cast<unsigned long>(fd) <= last; ++fd) ::close(static_cast<int>(fd));
}

// Scheduled threads on the machine now ("running/total" in /proc/loadavg).
std::uint64_t threads_on_machine() {
  std::ifstream in("/proc/loadavg");
  std::string load1, load5, load15, counts;
  if (!(in >> load1 >> load5 >> load15 >> counts)) return 0;
  const auto slash = counts.find('/');
  return slash == std::string::npos ? 0 : std::strtoull(counts.c_str() + slash + 1, nullptr, 10);
}

}  // namespace

ChildLimits worker_limits() { return {kWorkerMaxFileBytes, kWorkerMaxOpenFiles, kWorkerProcessHeadroom, false}; }
ChildLimits runner_limits() { return {kRunnerMaxFileBytes, kRunnerMaxOpenFiles, kRunnerProcessHeadroom, true}; }

std::uint64_t process_limit(const ChildLimits& limits) {
  // Never below what this user already runs (the count is per user, threads
  // included): the machine's total is an upper bound of that.
  return threads_on_machine() + limits.process_headroom;
}

int enter_confined_child(const ChildLimits& limits, std::uint64_t nproc) noexcept {
  if (limits.die_with_parent) {
    const pid_t parent = ::getppid();
    if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) return errno;
    if (::getppid() != parent) return ESRCH;  // the parent died before the line above
  }
  if (::setsid() < 0) return errno;  // own session, own process group
  if (int e = set_limit(RLIMIT_CORE, 0)) return e;
  if (int e = set_limit(RLIMIT_FSIZE, limits.max_file_bytes)) return e;
  if (int e = set_limit(RLIMIT_NOFILE, limits.max_open_files)) return e;
  if (nproc > 0)
    if (int e = set_limit(RLIMIT_NPROC, nproc)) return e;
  return 0;
}

pid_t spawn_confined(const ConfinedSpawn& spec) {
  // Everything the child needs is built before fork: after it, only
  // async-signal-safe calls (the parent may have other threads).
  std::vector<std::string> argv_s = {spec.exe.string()};
  argv_s.insert(argv_s.end(), spec.args.begin(), spec.args.end());
  std::vector<char*> argv, envp;
  for (auto& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> env = spec.env;
  for (auto& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  const std::uint64_t nproc = process_limit(spec.limits);
  const std::string dir = spec.work_dir.string();
  if (spec.fds.size() > kMaxMappedFds) throw Error("spawn_confined: too many descriptors to pass");
  for (const auto& [child, parent] : spec.fds)
    if (child < 0 || child >= kMovedFdBase || parent < 0) throw Error("spawn_confined: bad descriptor mapping");
  const int devnull = ::open("/dev/null", O_RDWR | O_CLOEXEC);
  int report[2];  // the child's errno if it cannot exec; closed by a successful exec
  if (devnull < 0 || ::pipe2(report, O_CLOEXEC) != 0) {
    if (devnull >= 0) ::close(devnull);
    throw Error(fmt::format("cannot start {}: {}", spec.exe.string(), std::strerror(errno)));
  }
  const pid_t pid = ::fork();
  if (pid == 0) {
    int err = 0;
    // Sources (and the report pipe) first move above every target, so that
    // no dup2 overwrites a descriptor still needed.
    int moved[kMaxMappedFds];
    const std::size_t n = spec.fds.size();
    const int rep = ::fcntl(report[1], F_DUPFD_CLOEXEC, kMovedFdBase);
    if (rep < 0) ::_exit(127);
    for (std::size_t i = 0; i < n && !err; ++i) {
      moved[i] = ::fcntl(spec.fds[i].second, F_DUPFD_CLOEXEC, kMovedFdBase);
      if (moved[i] < 0) err = errno;
    }
    for (int target = 0; target < 3 && !err; ++target)
      if (::dup2(devnull, target) < 0) err = errno;
    for (std::size_t i = 0; i < n && !err; ++i)
      if (::dup2(moved[i], spec.fds[i].first) < 0) err = errno;
    if (!err && !dir.empty() && ::chdir(dir.c_str()) != 0) err = errno;
    if (!err) err = enter_confined_child(spec.limits, nproc);
    if (!err) {
      int keep = kFirstClosedFd;
      for (std::size_t i = 0; i < n; ++i) keep = std::max(keep, spec.fds[i].first + 1);
      close_range_of(keep, rep - 1);
      close_range_of(rep + 1, ~0u);
      ::execve(argv[0], argv.data(), envp.data());
      err = errno;
    }
    (void)!::write(rep, &err, sizeof err);
    ::_exit(127);
  }
  const int fork_errno = errno;
  ::close(report[1]);
  ::close(devnull);
  if (pid < 0) {
    ::close(report[0]);
    throw Error(fmt::format("cannot fork to start {}: {}", spec.exe.string(), std::strerror(fork_errno)));
  }
  int child_err = 0;
  ssize_t got;
  do got = ::read(report[0], &child_err, sizeof child_err);
  while (got < 0 && errno == EINTR);
  ::close(report[0]);
  if (got == static_cast<ssize_t>(sizeof child_err)) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    throw Error(fmt::format("cannot start {}: {}", spec.exe.string(), std::strerror(child_err)));
  }
  return pid;
}

ScratchDir::ScratchDir(const std::filesystem::path& parent, std::string_view prefix) {
  std::filesystem::create_directories(parent);
  std::string templ = (parent / (std::string(prefix) + "XXXXXX")).string();
  if (!::mkdtemp(templ.data()))  // created 0700: private to this user
    throw Error(Error::Kind::unavailable,
                fmt::format("cannot create a scratch directory in {}: {}", parent.string(), std::strerror(errno)));
  path_ = templ;
}

ScratchDir::~ScratchDir() noexcept {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

std::string confinement_exit_reason(int wait_status, std::string_view stderr_tail) {
  if (!WIFSIGNALED(wait_status)) return {};
  const int sig = WTERMSIG(wait_status);
  if (sig == SIGXFSZ) return kFileSizeLimitReason;
  if (sig != SIGSYS) return {};
  std::string reason = kForbiddenSyscallReason;
  if (const auto at = stderr_tail.rfind(kSigsysPrefix); at != std::string_view::npos) {
    auto name = stderr_tail.substr(at + std::strlen(kSigsysPrefix));
    name = name.substr(0, name.find('\n'));
    if (!name.empty() && name.size() < 32) reason += fmt::format(" ({})", name);
  }
  return reason;
}

}  // namespace tessera
