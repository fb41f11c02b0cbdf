#include "harness/subprocess.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <cstdlib>

#include <fstream>
#include <random>
#include <thread>
#include <system_error>

#include <fmt/format.h>

#include "confine/confine.hpp"
#include "core/error.hpp"

namespace tessera {

namespace {

constexpr auto kPollInterval = std::chrono::milliseconds(5);

std::string read_prefix(const std::filesystem::path& p, std::size_t limit) {
  std::ifstream in(p, std::ios::binary);
  std::string s(limit, '\0');
  in.read(s.data(), static_cast<std::streamsize>(limit));
  s.resize(static_cast<std::size_t>(in.gcount()));
  std::error_code ec;
  const auto size = std::filesystem::file_size(p, ec);
  if (!ec && size > limit) s += fmt::format("\n[output truncated: {} bytes in total]", size);
  return s;
}

// posix_spawn's file actions and attributes, destroyed whatever happens.
struct SpawnSetup {
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;
  bool actions_ok, attr_ok;
  SpawnSetup()
      : actions_ok(::posix_spawn_file_actions_init(&actions) == 0), attr_ok(::posix_spawnattr_init(&attr) == 0) {}
  ~SpawnSetup() {
    if (actions_ok) ::posix_spawn_file_actions_destroy(&actions);
    if (attr_ok) ::posix_spawnattr_destroy(&attr);
  }
  SpawnSetup(const SpawnSetup&) = delete;
  SpawnSetup& operator=(const SpawnSetup&) = delete;
  bool ok() const { return actions_ok && attr_ok; }
};

// Removes the scratch files whatever happens.
struct ScratchFiles {
  std::filesystem::path in, out, err;
  ~ScratchFiles() noexcept {
    std::error_code ec;
    for (auto* p : {&in, &out, &err}) std::filesystem::remove(*p, ec);
  }
};

}  // namespace

pid_t spawn_process(const std::filesystem::path& exe, const std::vector<std::string>& args,
                    const std::vector<std::string>& env, const SpawnFiles& files,
                    const std::filesystem::path& work_dir, std::string* error) {
  SpawnSetup setup;
  if (!setup.ok()) {
    if (error) *error = "cannot prepare to start " + exe.string();
    return -1;
  }
  std::vector<std::string> argv_s{exe.string()};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  const auto pointers = [](const std::vector<std::string>& v) {
    std::vector<char*> out;
    for (const auto& e : v) out.push_back(const_cast<char*>(e.c_str()));
    out.push_back(nullptr);
    return out;
  };
  auto argv = pointers(argv_s);
  auto envp = pointers(env);
  const int write_flags = O_WRONLY | O_CREAT | (files.append ? O_APPEND : O_TRUNC);
  const std::string in = files.in.string(), out = files.out.string(), err = files.err.string(), dir = work_dir.string();
  int rc = 0;
  if (files.in_fd >= 0) rc = ::posix_spawn_file_actions_adddup2(&setup.actions, files.in_fd, 0);
  else if (!in.empty()) rc = ::posix_spawn_file_actions_addopen(&setup.actions, 0, in.c_str(), O_RDONLY, 0);
  if (!rc && files.out_fd >= 0) rc = ::posix_spawn_file_actions_adddup2(&setup.actions, files.out_fd, 1);
  else if (!rc) rc = ::posix_spawn_file_actions_addopen(&setup.actions, 1, out.c_str(), write_flags, files.mode);
  if (!rc)
    rc = err.empty() ? ::posix_spawn_file_actions_adddup2(&setup.actions, 1, 2)
                     : ::posix_spawn_file_actions_addopen(&setup.actions, 2, err.c_str(), write_flags, files.mode);
  if (!rc && files.close_other_fds) {
#if defined(__GLIBC__) && __GLIBC_PREREQ(2, 34)
    rc = ::posix_spawn_file_actions_addclosefrom_np(&setup.actions, 3);
#else
    rc = ENOSYS;  // no way to close them between spawn and exec: refuse rather than leak them
#endif
  }
  if (!rc && !dir.empty()) rc = ::posix_spawn_file_actions_addchdir_np(&setup.actions, dir.c_str());
  if (!rc) rc = ::posix_spawnattr_setpgroup(&setup.attr, 0);
  if (!rc) rc = ::posix_spawnattr_setflags(&setup.attr, POSIX_SPAWN_SETPGROUP);
  pid_t pid = -1;
  if (!rc) rc = ::posix_spawn(&pid, exe.c_str(), &setup.actions, &setup.attr, argv.data(), envp.data());
  if (rc) {
    if (error) *error = fmt::format("cannot run {}: {}", exe.string(), std::strerror(rc));
    return -1;
  }
  return pid;
}

ProcessResult run_process(const std::filesystem::path& exe, const std::vector<std::string>& args,
                          const std::string& stdin_data, double timeout_seconds, std::size_t output_limit,
                          const std::filesystem::path& work_dir) {
  ProcessResult r;
  std::filesystem::create_directories(work_dir);
  thread_local std::mt19937_64 rng{std::random_device{}()};
  const auto stem = work_dir / fmt::format("proc{:x}", rng());
  ScratchFiles f{stem.string() + ".in", stem.string() + ".out", stem.string() + ".err"};
  {
    std::ofstream in(f.in, std::ios::binary);
    in << stdin_data;
  }
  // Compilers get the allow-listed environment: a candidate's source reaches
  // them, and nothing of the user's secrets should.
  std::string why;
  const pid_t pid = spawn_process(exe, args, sandbox_environment(current_environment()), {f.in, f.out, f.err},
                                  work_dir, &why);
  if (pid < 0) {
    r.spawn_failed = true;
    r.error = why;
    return r;
  }
  // Polled with WNOHANG: a blocking wait could not keep the time limit.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                                               std::chrono::duration<double>(timeout_seconds));
  int status = 0;
  for (;;) {
    const pid_t w = ::waitpid(pid, &status, WNOHANG);
    if (w == pid) break;
    if (w < 0 && errno != EINTR) {
      r.spawn_failed = true;
      r.error = fmt::format("waiting for {} failed: {}", exe.string(), std::strerror(errno));
      ::killpg(pid, SIGKILL);
      return r;
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      r.timed_out = true;
      ::killpg(pid, SIGKILL);
      while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      break;
    }
    std::this_thread::sleep_for(kPollInterval);
  }
  if (!r.timed_out) r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.output = read_prefix(f.out, output_limit);
  r.output += read_prefix(f.err, output_limit > r.output.size() ? output_limit - r.output.size() : 0);
  return r;
}

std::filesystem::path self_executable() {
  std::error_code ec;
  auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) throw Error("cannot resolve /proc/self/exe");
  return p;
}

std::filesystem::path tessera_executable() {
  if (const char* env = std::getenv("TESSERA_BINARY"); env && *env) return env;
  const auto self = self_executable();
  if (self.filename() == "tessera") return self;
  std::error_code ec;
  for (auto dir = self.parent_path(); !dir.empty() && dir != dir.root_path(); dir = dir.parent_path()) {
    for (const auto& candidate : {dir / "tessera", dir / "bin" / "tessera"}) {
      if (std::filesystem::is_regular_file(candidate, ec) && candidate != self) return candidate;
    }
    if (std::filesystem::exists(dir / "CMakeCache.txt", ec)) break;  // top of the build tree
  }
  throw Error(Error::Kind::unavailable,
              "cannot find the tessera binary (needed for sandboxed compiles and workers): set TESSERA_BINARY");
}

}  // namespace tessera
