#include "bench/detail/serve_child.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <regex>
#include <thread>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/fs.hpp"

namespace tessera::bench::detail {

namespace {
constexpr auto kPollInterval = std::chrono::milliseconds(50);
constexpr std::size_t kLogTailBytes = 3000;
}  // namespace

ServeChild::ServeChild(const std::filesystem::path& binary, const std::vector<std::string>& args,
                       const std::filesystem::path& log, double start_timeout_s)
    : log_(log) {
  // Everything the child needs is made before fork(): between fork and exec
  // a multi-threaded parent's child may only make async-signal-safe calls.
  const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw Error(fmt::format("cannot write the server's log {}", log.string()));
  std::vector<std::string> argv_text = {binary.string()};
  argv_text.insert(argv_text.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : argv_text) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t bench = ::getpid();
  pid_ = ::fork();
  if (pid_ == 0) {
    ::setpgid(0, 0);  // its own group: the workers it starts can be ended with it
    // Out of the terminal's group, a Ctrl-C no longer reaches it: it goes
    // when the bench goes, however the bench ends.
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (::getppid() != bench) ::_exit(127);  // the bench ended before the line above
    ::dup2(fd, 1);
    ::dup2(fd, 2);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  ::close(fd);
  if (pid_ < 0) throw Error("fork failed starting tessera serve");

  const std::regex listening("listening on (http://[^ ]+:[0-9]+)");
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(start_timeout_s);
  for (;;) {
    std::smatch m;
    const std::string text = read_file(log_);
    if (std::regex_search(text, m, listening)) {
      url_ = m[1];
      return;
    }
    if (exited())
      throw Error(Error::Kind::unavailable, fmt::format("tessera serve exited before it listened:\n{}", log_tail(kLogTailBytes)));
    if (std::chrono::steady_clock::now() > deadline) {
      const std::string tail = log_tail(kLogTailBytes);
      ::kill(-pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
      reaped_ = true;
      throw Error(Error::Kind::unavailable,
                  fmt::format("tessera serve did not listen within {:.0f} s:\n{}", start_timeout_s, tail));
    }
    std::this_thread::sleep_for(kPollInterval);
  }
}

ServeChild::~ServeChild() {
  if (pid_ <= 0 || reaped_) return;
  ::kill(pid_, SIGTERM);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(kServeStopSeconds);
  while (!exited() && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(kPollInterval);
  if (!reaped_) {
    ::kill(-pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
}

bool ServeChild::exited() {
  if (reaped_) return true;
  int status = 0;
  if (::waitpid(pid_, &status, WNOHANG) == pid_) reaped_ = true;
  return reaped_;
}

std::string ServeChild::log_tail(std::size_t bytes) const {
  std::string text;
  try {
    text = read_file(log_);
  } catch (const std::exception&) {
    return {};
  }
  return text.size() > bytes ? text.substr(text.size() - bytes) : text;
}

}  // namespace tessera::bench::detail
