// What confinement this machine really enforces: a throwaway child takes
// the runner's limits and policy (refusals as EPERM, so that one child can
// try everything) and attempts what a hostile candidate would.
#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "confine/confine.hpp"

namespace tessera {

namespace {

bool socket_refused() {
  const int s = ::socket(AF_INET, SOCK_STREAM, 0);
  if (s >= 0) ::close(s);
  return s < 0;
}

bool fork_refused() {
  const pid_t p = ::fork();
  if (p == 0) ::_exit(0);
  if (p > 0) ::waitpid(p, nullptr, 0);
  return p < 0;
}

bool write_refused(const std::filesystem::path& outside) {
  const int fd = ::open((outside / "probe").c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd >= 0) ::close(fd);
  return fd < 0;
}

// Signal 0 asks the kernel whether a signal would be allowed, and sends nothing.
bool signal_parent_refused() { return ::kill(::getppid(), 0) != 0; }

// The child: confines itself, tries, writes its findings as JSON, exits
// without running destructors or atexit handlers (a forked copy of us).
[[noreturn]] void probe_child(int out, const std::filesystem::path& scratch, const std::filesystem::path& outside) {
  nlohmann::json j;
  try {
    const ChildLimits limits = runner_limits();
    const int err = enter_confined_child({limits.max_file_bytes, limits.max_open_files, limits.process_headroom, false},
                                         process_limit(limits));
    ConfinePolicy policy = runner_policy(scratch, {});
    policy.kill_on_violation = false;
    const ProtectionReport report = confine_self(policy);
    j = {{"report", report},
         {"socket_blocked", socket_refused()},
         {"fork_blocked", fork_refused()},
         {"write_outside_blocked", write_refused(outside)},
         {"signal_parent_blocked", signal_parent_refused()},
         {"error", err ? std::string("limits: ") + std::strerror(err) : std::string()}};
  } catch (const std::exception& e) {
    j = {{"error", e.what()}};
  }
  const std::string s = j.dump();
  (void)!::write(out, s.data(), s.size());
  ::_exit(0);
}

}  // namespace

void to_json(nlohmann::json& j, const ProbeResult& r) {
  j = r.report;
  j["socket_blocked"] = r.socket_blocked;
  j["fork_blocked"] = r.fork_blocked;
  j["write_outside_blocked"] = r.write_outside_blocked;
  j["signal_parent_blocked"] = r.signal_parent_blocked;
  if (!r.error.empty()) j["error"] = r.error;
}

ProbeResult probe_protections() {
  ProbeResult r;
  try {
    ScratchDir base(std::filesystem::temp_directory_path(), "tessera-probe-");
    const auto scratch = base.path() / "scratch", outside = base.path() / "outside";
    std::filesystem::create_directories(scratch);
    std::filesystem::create_directories(outside);
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error(std::strerror(errno));
    const pid_t pid = ::fork();
    if (pid < 0) {
      ::close(fds[0]);
      ::close(fds[1]);
      throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
    }
    if (pid == 0) {
      ::close(fds[0]);
      probe_child(fds[1], scratch, outside);
    }
    ::close(fds[1]);
    std::string text;
    char buf[4096];
    for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) != 0;) {
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) break;
      text.append(buf, static_cast<std::size_t>(n));
    }
    ::close(fds[0]);
    int status = 0;
    ::waitpid(pid, &status, 0);
    const auto j = nlohmann::json::parse(text);
    r.error = j.value("error", "");
    if (j.contains("report")) r.report = j.at("report").get<ProtectionReport>();
    r.socket_blocked = j.value("socket_blocked", false);
    r.fork_blocked = j.value("fork_blocked", false);
    r.write_outside_blocked = j.value("write_outside_blocked", false);
    r.signal_parent_blocked = j.value("signal_parent_blocked", false);
  } catch (const std::exception& e) {
    r.error = std::string("the probe failed: ") + e.what();
  }
  return r;
}

}  // namespace tessera
