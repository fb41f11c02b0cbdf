#include "harness/detail/worker_client.hpp"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <fstream>
#include <optional>
#include <thread>

#include <boost/process.hpp>
#include <boost/process/extend.hpp>
#include <fmt/format.h>

#include "confine/confine.hpp"
#include "core/error.hpp"
#include "harness/detail/subprocess_env.hpp"
#include "harness/detail/worker_wire.hpp"

namespace bp = boost::process;

namespace tessera::detail {

namespace {
constexpr int kPollSliceMs = 100;  // how often a silent wait checks that the worker still lives
constexpr std::size_t kMaxLineBytes = 64u << 20;
constexpr auto kQuitGrace = std::chrono::seconds(2);  // a worker told to quit gets this long
constexpr const char* kScratchPrefix = "tessera-worker-";

// Between fork and exec of the worker: its own session and process group,
// and its rlimits (confine/confine.hpp). A failure aborts the spawn.
struct ConfinedChild : bp::extend::handler {
  ChildLimits limits;
  std::uint64_t nproc;
  template <class Executor>
  void on_exec_setup(Executor& exec) const {
    if (const int err = enter_confined_child(limits, nproc); err != 0)
      exec.set_error(std::error_code(err, std::system_category()), "cannot confine the worker");
  }
};

}  // namespace

struct WorkerClient::Impl {
  // Declared first, so removed last: after the worker is gone.
  std::optional<ScratchDir> scratch;
  bp::pipe to_worker, from_worker;
  bp::child child;
  std::string buffer;
  std::filesystem::path log_path;
};

WorkerClient::WorkerClient(const std::filesystem::path& exe, int device, const std::filesystem::path& log_path,
                           bool remeasure_baselines, int autotune_max_algos)
    : impl_(std::make_unique<Impl>()) {
  // A worker that dies while we write to it must not kill us with SIGPIPE.
  ::signal(SIGPIPE, SIG_IGN);
  impl_->log_path = log_path;
  std::filesystem::create_directories(log_path.parent_path());
  // The worker sees only its own GPU, as device 0; it starts in a private
  // scratch directory with an allow-listed environment (no secrets).
  impl_->scratch.emplace(std::filesystem::temp_directory_path(), kScratchPrefix);
  const auto& scratch = impl_->scratch->path();
  std::vector<std::string> args = {"__worker", "--device", "0", "--autotune-max-algos", std::to_string(autotune_max_algos)};
  if (remeasure_baselines) args.push_back("--remeasure-baselines");
  const ChildLimits limits = worker_limits();
  impl_->child = bp::child(bp::exe = exe.string(), bp::args = args, bp::std_in < impl_->to_worker,
                           bp::std_out > impl_->from_worker, bp::std_err > log_path.string(),
                           bp::start_dir = scratch.string(), ExactEnvironment(worker_environment(device, scratch)),
                           ConfinedChild{{}, limits, process_limit(limits)});
  // Close our copies of the worker's ends, so its death reads as EOF.
  ::close(impl_->to_worker.native_source());
  impl_->to_worker.assign_source(-1);
  ::close(impl_->from_worker.native_sink());
  impl_->from_worker.assign_sink(-1);
}

WorkerClient::~WorkerClient() {
  if (!impl_) return;
  if (running()) {
    const std::string quit = "{\"op\":\"quit\"}\n";
    (void)!::write(impl_->to_worker.native_sink(), quit.data(), quit.size());
    // Polled, not wait_for(): see run_process.
    const auto deadline = std::chrono::steady_clock::now() + kQuitGrace;
    while (running() && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    if (running()) kill();
  }
}

bool WorkerClient::running() {
  std::error_code ec;
  return impl_->child.valid() && impl_->child.running(ec);
}

void WorkerClient::kill() noexcept {
  // The worker leads its own process group: whatever it started goes too.
  if (const pid_t pid = impl_->child.valid() ? impl_->child.id() : 0; pid > 0 && ::getpgid(pid) == pid)
    ::kill(-pid, SIGKILL);
  std::error_code ec;
  impl_->child.terminate(ec);
  impl_->child.wait(ec);
}

int WorkerClient::pid() const { return impl_->child.id(); }

std::string WorkerClient::log_tail(std::size_t bytes) const {
  std::ifstream in(impl_->log_path, std::ios::binary | std::ios::ate);
  if (!in) return {};
  const auto size = static_cast<std::size_t>(in.tellg());
  const auto start = size > bytes ? size - bytes : 0;
  in.seekg(static_cast<std::streamoff>(start));
  std::string s(size - start, '\0');
  in.read(s.data(), static_cast<std::streamsize>(s.size()));
  return s;
}

WorkerReply WorkerClient::start(double timeout_s) { return wait_for("ready", timeout_s); }

WorkerReply WorkerClient::call(const nlohmann::json& request, const std::string& answer_event,
                               double silence_timeout_s) {
  std::string line = request.dump() + "\n";
  const char* p = line.data();
  std::size_t left = line.size();
  while (left > 0) {
    ssize_t n = ::write(impl_->to_worker.native_sink(), p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return {WorkerReply::Kind::died, {}, "the worker is gone (write failed)", ""};
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  return wait_for(answer_event, silence_timeout_s);
}

WorkerReply WorkerClient::wait_for(const std::string& answer_event, double silence_timeout_s) {
  using Clock = std::chrono::steady_clock;
  auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(silence_timeout_s));
  std::string phase;
  const int fd = impl_->from_worker.native_source();
  for (;;) {
    // Handle every complete line already buffered.
    while (auto line = take_line(impl_->buffer)) {
      WorkerLine ev = classify_worker_line(*line, answer_event);
      using L = WorkerLine::Kind;
      if (ev.kind == L::heartbeat) {
        phase = ev.phase;
        deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(silence_timeout_s));
      } else if (ev.kind == L::fatal) {
        return {WorkerReply::Kind::fatal, ev.event, ev.reason, phase};
      } else if (ev.kind == L::answer) {
        return {WorkerReply::Kind::answer, ev.event, "", phase};
      }
    }
    const auto now = Clock::now();
    if (now >= deadline) {
      kill();
      return {WorkerReply::Kind::timed_out, {},
              fmt::format("no progress for {:.0f} s{}", silence_timeout_s, phase.empty() ? "" : " during " + phase),
              phase};
    }
    const auto left_ms = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count();
    pollfd pfd{fd, POLLIN, 0};
    int rc = ::poll(&pfd, 1, static_cast<int>(std::min<long long>(left_ms, kPollSliceMs)));
    if (rc < 0 && errno != EINTR) return {WorkerReply::Kind::died, {}, "poll failed", phase};
    if (rc > 0) {
      char buf[65536];
      ssize_t n = ::read(fd, buf, sizeof buf);
      if (n > 0) {
        impl_->buffer.append(buf, static_cast<std::size_t>(n));
        if (impl_->buffer.size() > kMaxLineBytes) {
          kill();
          return {WorkerReply::Kind::fatal, {}, "the worker sent an oversized line", phase};
        }
        continue;
      }
      if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) {
        std::error_code ec;
        impl_->child.wait(ec);
        const int status = impl_->child.native_exit_code();
        WorkerReply died{WorkerReply::Kind::died, {}, "", phase};
        if (WIFSIGNALED(status)) died.exit_signal = WTERMSIG(status);
        if (WIFEXITED(status)) died.exit_code = WEXITSTATUS(status);
        died.reason = fmt::format("the worker process died ({}){}",
                                  died.exit_signal ? "signal " + std::to_string(died.exit_signal)
                                                   : "exit status " + std::to_string(died.exit_code),
                                  phase.empty() ? "" : " during " + phase);
        return died;
      }
    }
  }
}

}  // namespace tessera::detail
