#include "worker/child_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <thread>

#include <fmt/format.h>

#include "core/error.hpp"

namespace tessera::worker {

namespace {

constexpr std::size_t kMaxLineBytes = 64u << 20;  // a captured call is far smaller
constexpr int kPollSliceMs = 50;

using Clock = std::chrono::steady_clock;

Clock::time_point deadline_after(double seconds) {
  return Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

ChildExit decode(int status) {
  ChildExit e;
  e.exited = true;
  e.wait_status = status;
  if (WIFEXITED(status)) e.code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) e.signal = WTERMSIG(status);
  return e;
}

}  // namespace

std::string ChildExit::describe() const {
  if (!exited) return "still running";
  if (signal) {
    const char* name = sigabbrev_np(signal);
    return fmt::format("killed by SIG{}", name ? name : std::to_string(signal).c_str());
  }
  return fmt::format("exit code {}", code);
}

ChildProcess::ChildProcess(ConfinedSpawn spec) {
  int in[2], out[2];
  if (::pipe2(in, O_CLOEXEC) != 0) throw Error("cannot create a pipe for a child process");
  if (::pipe2(out, O_CLOEXEC) != 0) {
    ::close(in[0]);
    ::close(in[1]);
    throw Error("cannot create a pipe for a child process");
  }
  std::erase_if(spec.fds, [](const auto& f) { return f.first == STDIN_FILENO || f.first == STDOUT_FILENO; });
  spec.fds.push_back({STDIN_FILENO, in[0]});
  spec.fds.push_back({STDOUT_FILENO, out[1]});
  try {
    pid_ = spawn_confined(spec);
  } catch (...) {
    for (int fd : {in[0], in[1], out[0], out[1]}) ::close(fd);
    throw;
  }
  ::close(in[0]);
  ::close(out[1]);
  to_child_ = in[1];
  from_child_ = out[0];
  ::signal(SIGPIPE, SIG_IGN);  // a dead child must not kill us when we write to it
}

ChildProcess::~ChildProcess() {
  if (to_child_ >= 0) ::close(to_child_);
  if (from_child_ >= 0) ::close(from_child_);
  if (!exit_.exited) kill();
}

bool ChildProcess::send_line(const std::string& line) {
  std::string s = line + "\n";
  const char* p = s.data();
  std::size_t left = s.size();
  while (left > 0) {
    const ssize_t n = ::write(to_child_, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  return true;
}

std::optional<std::string> ChildProcess::read_line(double timeout_s) {
  const auto deadline = deadline_after(timeout_s);
  timed_out_ = false;
  for (;;) {
    if (auto nl = buffer_.find('\n'); nl != std::string::npos) {
      std::string line = buffer_.substr(0, nl);
      buffer_.erase(0, nl + 1);
      return line;
    }
    const auto now = Clock::now();
    if (now >= deadline) {
      timed_out_ = true;
      return std::nullopt;
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count();
    pollfd pfd{from_child_, POLLIN, 0};
    const int rc = ::poll(&pfd, 1, static_cast<int>(std::min<long long>(left, kPollSliceMs)));
    if (rc < 0 && errno != EINTR) return std::nullopt;
    if (rc <= 0) continue;
    char buf[65536];
    const ssize_t n = ::read(from_child_, buf, sizeof buf);
    if (n > 0) {
      buffer_.append(buf, static_cast<std::size_t>(n));
      if (buffer_.size() > kMaxLineBytes) return std::nullopt;
      continue;
    }
    if (n == 0 || (errno != EINTR && errno != EAGAIN)) return std::nullopt;
  }
}

void ChildProcess::kill() noexcept {
  if (pid_ <= 0 || exit_.exited) return;
  ::kill(-pid_, SIGKILL);  // its process group: whatever it forked goes too
  ::kill(pid_, SIGKILL);
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  exit_ = decode(status);
}

ChildExit ChildProcess::wait(double timeout_s) {
  if (exit_.exited || pid_ <= 0) return exit_;
  const auto deadline = deadline_after(timeout_s);
  for (;;) {
    int status = 0;
    const pid_t r = ::waitpid(pid_, &status, WNOHANG);
    if (r == pid_) {
      exit_ = decode(status);
      return exit_;
    }
    if (r < 0 && errno != EINTR) return exit_;
    if (Clock::now() >= deadline) return exit_;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

}  // namespace tessera::worker
