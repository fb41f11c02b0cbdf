#include "harness/detail/compile_servers.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <string_view>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "confine/confine.hpp"
#include "harness/detail/worker_wire.hpp"
#include "harness/subprocess.hpp"

namespace tessera::detail {

namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kCloseGrace = std::chrono::seconds(2);  // an idle server told EOF exits at once; then SIGKILL
constexpr auto kReapPoll = std::chrono::milliseconds(2);

int default_max_servers() {
  const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
  return static_cast<int>(std::min<unsigned>(hw, kCompileServerMaxCount));
}

int max_servers_of(const CompileServerLimits& limits) {
  return limits.max_servers > 0 ? limits.max_servers : default_max_servers();
}

// 128 + signal for a signal, as run_process reports it.
int exit_code_of(int status) { return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status); }

void close_fd(int& fd) noexcept {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

}  // namespace

CompileServerSetting compile_server_setting() {
  const char* v = std::getenv(kCompileServerEnvVar);
  const std::string_view s = v ? v : "";
  if (s == "off" || s == "0") return {false, false};
  if (s == "pch") return {true, true};
  if (s == "nopch") return {true, false};
  return {};
}

// One `tessera __compile --serve` process and the two pipes to it.
struct CompileServers::Server {
  std::string flavour;                 // which spec it serves (exe, PCH, working folder)
  std::filesystem::path work_dir;
  std::optional<ScratchDir> scratch;   // its PCH files; first: removed after the process is gone
  pid_t pid = -1;
  int to = -1, from = -1;              // its stdin, its stdout (and stderr)
  std::string buffer;                  // read, not yet a whole line
  int compiles = 0;
  Clock::time_point idle_since{};  // when it last went back to the idle list
  bool reaped = false;
  bool write_failed = false;  // gone before the request reached it (died while idle)

  // Its working folder (and PCH folder) still there. A cache emptied under a
  // running process (bench scale between points) removes them: a server left
  // in a removed folder writes another path into its cubins' line tables than
  // a one-shot child would, and NVRTC fails every compile without its PCH folder.
  bool still_placed() const {
    std::error_code ec;
    return std::filesystem::is_directory(work_dir, ec) &&
           (!scratch || std::filesystem::is_directory(scratch->path(), ec));
  }

  Server() = default;
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;
  ~Server() {
    close_input();
    if (!reaped) {
      const auto deadline = Clock::now() + kCloseGrace;
      int status = 0;
      while (::waitpid(pid, &status, WNOHANG) == 0 && Clock::now() < deadline) std::this_thread::sleep_for(kReapPoll);
      if (::waitpid(pid, &status, WNOHANG) == 0) kill_and_reap();
      reaped = true;
    }
    close_fd(from);
  }
  // EOF on its stdin: an idle server ends its loop and exits.
  void close_input() noexcept { close_fd(to); }
  // Its whole process group, then the wait; the exit status.
  int kill_and_reap() noexcept {
    ::killpg(pid, SIGKILL);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    reaped = true;
    return status;
  }
  bool write_line(const std::string& line) noexcept {
    std::string_view left = line;
    while (!left.empty()) {
      const ssize_t n = ::write(to, left.data(), left.size());
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;  // EPIPE: it is gone (SIGPIPE is ignored)
      left.remove_prefix(static_cast<std::size_t>(n));
    }
    return true;
  }
  CompileServerReply ask(const std::string& request_line, double timeout_s, std::size_t limit);
};

CompileServerReply CompileServers::Server::ask(const std::string& request_line, double timeout_s,
                                               std::size_t limit) {
  using K = CompileServerReply::Kind;
  CompileServerReply r;
  if (!write_line(request_line + "\n")) {
    write_failed = true;
    r.kind = K::died;
    r.exit_code = exit_code_of(kill_and_reap());
    return r;
  }
  const auto deadline =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout_s));
  std::size_t read_bytes = 0;
  for (;;) {
    while (auto line = take_line(buffer)) {
      if (std::string_view(*line).substr(0, kCompileAnswerPrefix.size()) == kCompileAnswerPrefix) {
        r.kind = K::answer;
        r.answer = std::move(*line);
        return r;
      }
      if (!line->empty()) r.output += *line + "\n";  // noise: kept for a death's log, bounded below
    }
    const auto now = Clock::now();
    if (now >= deadline) {
      r.kind = K::timed_out;
      kill_and_reap();
      return r;
    }
    const auto left_ms = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count() + 1;
    pollfd pfd{from, POLLIN, 0};
    const int rc = ::poll(&pfd, 1, static_cast<int>(std::min<long long>(left_ms, 1 << 30)));
    if (rc < 0 && errno != EINTR) {
      r.kind = K::died;
      r.exit_code = exit_code_of(kill_and_reap());
      return r;
    }
    if (rc <= 0) continue;
    char chunk[65536];
    const ssize_t n = ::read(from, chunk, sizeof chunk);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n <= 0) {  // EOF: it died (its group killed too, should it have started anything)
      r.kind = K::died;
      r.output += buffer;
      buffer.clear();
      r.exit_code = exit_code_of(kill_and_reap());
      return r;
    }
    read_bytes += static_cast<std::size_t>(n);
    buffer.append(chunk, static_cast<std::size_t>(n));
    if (read_bytes > limit) {
      r.kind = K::overflow;
      r.output += buffer.substr(0, limit);
      kill_and_reap();
      return r;
    }
  }
}

struct CompileServers::State {
  std::mutex mu;
  std::condition_variable freed;  // a server went idle or a slot came free
  std::vector<std::unique_ptr<Server>> idle;
  int live = 0;                   // started and not yet reaped: idle, busy, or being started
  CompileServerLimits limits;
  CompileServerStats stats;
  bool closed = false;
};

namespace {

// Servers are told apart by what they were started with: the binary, PCH,
// and the working folder, which NVRTC writes into the cubin's line table
// (-lineinfo): a server works where a one-shot child would, so that both
// give the same bytes.
std::string flavour_of(const CompileServerSpec& spec) {
  return fmt::format("{}\n{}\n{}", spec.exe.string(), spec.pch, spec.work_dir.string());
}

std::unique_ptr<CompileServers::Server> start_server(const CompileServerSpec& spec, std::string* error) {
  auto s = std::make_unique<CompileServers::Server>();
  s->flavour = flavour_of(spec);
  s->work_dir = spec.work_dir;
  try {
    std::filesystem::create_directories(spec.work_dir);
    if (spec.pch) s->scratch.emplace(spec.work_dir, "server-pch-");  // its own: PCH files are per process
  } catch (const std::exception& e) {
    *error = e.what();
    return nullptr;
  }
  int in[2], out[2];
  if (::pipe2(in, O_CLOEXEC) != 0) {
    *error = fmt::format("cannot make a pipe for a compile server: {}", std::strerror(errno));
    return nullptr;
  }
  if (::pipe2(out, O_CLOEXEC) != 0) {
    *error = fmt::format("cannot make a pipe for a compile server: {}", std::strerror(errno));
    ::close(in[0]);
    ::close(in[1]);
    return nullptr;
  }
  // The one-shot compile child's environment (allow-listed: a candidate's
  // source reaches the compiler, no secret should), plus the test hook.
  std::map<std::string, std::string> extra;
  if (const char* f = std::getenv(kCompileServerFaultsEnvVar); f && std::string_view(f) == kCompileServerFaultsValue)
    extra[kCompileServerFaultsEnvVar] = f;
  std::vector<std::string> args = {"__compile", "--serve"};
  if (spec.pch) args.insert(args.end(), {"--pch-dir", s->scratch->path().string()});
  SpawnFiles files;
  files.in_fd = in[0];
  files.out_fd = out[1];  // stderr too (err left empty): NVRTC's noise, dropped before the answer
  files.close_other_fds = true;
  s->pid = spawn_process(spec.exe, args, sandbox_environment(current_environment(), extra), files, spec.work_dir,
                         error);
  ::close(in[0]);
  ::close(out[1]);
  s->to = in[1];
  s->from = out[0];
  if (s->pid < 0) {
    s->reaped = true;  // nothing to wait for
    return nullptr;
  }
  return s;
}

// Closes idle servers: EOF to all first, so that they exit together, then reaps each.
void close_all(std::vector<std::unique_ptr<CompileServers::Server>>& servers) {
  for (auto& s : servers) s->close_input();
  servers.clear();
}

// Moves the idle servers unused for longer than the limit into `stale` (the
// caller holds the pool's lock, and closes them after releasing it).
void take_stale(std::vector<std::unique_ptr<CompileServers::Server>>& idle, double idle_close_s,
                std::vector<std::unique_ptr<CompileServers::Server>>& stale) {
  if (idle_close_s <= 0) return;
  const auto oldest =
      Clock::now() - std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(idle_close_s));
  for (auto it = idle.begin(); it != idle.end();) {
    if ((*it)->idle_since < oldest) {
      stale.push_back(std::move(*it));
      it = idle.erase(it);
    } else {
      ++it;
    }
  }
}

// Shuts the pool down when this process exits (after main returns or exit()).
struct ShutdownAtExit {
  ~ShutdownAtExit() { CompileServers::instance().shutdown(); }
};

}  // namespace

CompileServers::CompileServers() : state_(std::make_unique<State>()), owner_(::getpid()) {
  state_->stats.max_servers = default_max_servers();
}
CompileServers::~CompileServers() = default;

CompileServers& CompileServers::instance() {
  // Never destroyed: a thread still compiling at exit returns its server to
  // a pool that must still be there. The guard below closes the idle ones.
  static CompileServers* pool = [] {
    ::signal(SIGPIPE, SIG_IGN);  // a server that dies while we write to it must not kill us
    return new CompileServers();
  }();
  static ShutdownAtExit guard;
  return *pool;
}

CompileServerReply CompileServers::ask(const CompileServerSpec& spec, const std::string& request_line,
                                       double timeout_s) {
  // A forked copy of this process (a trainer's worker processes) shares the
  // servers' pipes with its parent, and its copy of the lock may be held
  // forever: it compiles in one-shot children, never through the parent's servers.
  if (::getpid() != owner_) {
    CompileServerReply not_ours;
    not_ours.kind = CompileServerReply::Kind::closed;
    return not_ours;
  }
  State& st = *state_;
  const std::string flavour = flavour_of(spec);
  // A server idle since its last answer may have died meanwhile (killed from
  // outside): its request gets one more try, on a fresh server.
  for (int attempt = 0;; ++attempt) {
    close_stale();
    std::unique_ptr<Server> server, retire;
    bool fresh = false;
    {
      std::unique_lock lock(st.mu);
      for (;;) {
        if (st.closed) {
          CompileServerReply closed;
          closed.kind = CompileServerReply::Kind::closed;
          return closed;
        }
        const int max = max_servers_of(st.limits);
        auto it = std::find_if(st.idle.rbegin(), st.idle.rend(), [&](const auto& s) { return s->flavour == flavour; });
        if (it != st.idle.rend()) {  // the most recently used: its caches are warm
          server = std::move(*it);
          st.idle.erase(std::next(it).base());
          if (server->still_placed()) break;
          retire = std::move(server);  // its folder was removed: a fresh one takes its slot
          fresh = true;
          break;
        }
        if (st.live < max || !st.idle.empty()) {
          if (st.live >= max) {  // every slot taken, one by another kind of server: it makes room
            retire = std::move(st.idle.front());
            st.idle.erase(st.idle.begin());
          } else {
            ++st.live;
          }
          st.stats.peak_live = std::max(st.stats.peak_live, st.live);
          fresh = true;
          break;
        }
        st.freed.wait(lock);
      }
    }
    std::string error;
    if (fresh) {
      retire.reset();  // reaped before its replacement starts: never more processes than slots
      server = start_server(spec, &error);
      std::lock_guard g(st.mu);
      if (!server) {
        --st.live;
        st.freed.notify_one();
        CompileServerReply unavailable;
        unavailable.error = error;  // kind: unavailable
        return unavailable;
      }
      ++st.stats.started;
    }
    CompileServerReply reply = server->ask(request_line, timeout_s, spec.output_limit);
    const bool answered = reply.kind == CompileServerReply::Kind::answer;
    const bool died_idle = server->write_failed && !fresh;
    if (answered) ++server->compiles;
    release(std::move(server), answered);
    if (died_idle && attempt == 0) continue;
    if (answered) {
      std::lock_guard g(st.mu);
      ++st.stats.answered;
    }
    return reply;
  }
}

void CompileServers::close_idle(const std::function<void(std::vector<std::unique_ptr<Server>>&)>& take,
                                const std::function<void(int)>& after, bool only_if_taken) {
  State& st = *state_;
  std::vector<std::unique_ptr<Server>> closing;
  {
    std::lock_guard g(st.mu);
    take(closing);
    if (only_if_taken && closing.empty()) return;
  }
  // Closed and reaped outside the lock, as release() does; their slots count
  // until they are gone, so there are never more processes than slots.
  const int n = static_cast<int>(closing.size());
  close_all(closing);
  std::lock_guard g(st.mu);
  st.live -= n;
  after(n);
  st.freed.notify_all();
}

void CompileServers::close_stale() {
  State& st = *state_;
  // Every ask() starts here, and mostly nothing is stale: then no second lock,
  // and no wake-up of every thread waiting for a server, which would look for
  // a free slot and go back to waiting.
  close_idle([&](auto& out) { take_stale(st.idle, st.limits.idle_close_s, out); },
             [&](int n) { st.stats.closed_idle += n; }, /*only_if_taken=*/true);
}

void CompileServers::release(std::unique_ptr<Server> server, bool reusable) {
  State& st = *state_;
  {
    std::lock_guard g(st.mu);
    const int recycle_after = st.limits.recycle_after;
    if (reusable && !st.closed && server->compiles < recycle_after) {
      server->idle_since = Clock::now();
      st.idle.push_back(std::move(server));
      st.freed.notify_one();
      return;
    }
    if (reusable && server->compiles >= recycle_after) ++st.stats.recycled;
  }
  server.reset();  // closed and reaped outside the lock, then its slot is free
  std::lock_guard g(st.mu);
  --st.live;
  st.freed.notify_one();
}

CompileServerStats CompileServers::stats() const {
  std::lock_guard g(state_->mu);
  CompileServerStats s = state_->stats;
  s.live = state_->live;
  s.max_servers = max_servers_of(state_->limits);
  return s;
}

void CompileServers::configure(const CompileServerLimits& limits) {
  State& st = *state_;
  close_idle(
      [&](auto& out) {
        st.limits = limits;
        out.swap(st.idle);
      },
      [&](int) {
        st.stats = {};
        st.stats.peak_live = st.live;
      });
}

void CompileServers::shutdown() {
  State& st = *state_;
  close_idle(
      [&](auto& out) {
        st.closed = true;
        out.swap(st.idle);
      },
      [](int) {});
}

}  // namespace tessera::detail
