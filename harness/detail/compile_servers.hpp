#pragma once
// Long-lived compile processes (`tessera __compile --serve`) for NVRTC
// compiles (issue 37). A fresh `tessera __compile` per candidate pays the
// process start, loading libnvrtc and first-touching its heap on every
// compile, and NVRTC's precompiled headers never outlive a process; a server
// pays them once and answers one CompileChildRequest line after another.
//
// The pool is process-wide: at most one request per server at a time, at most
// min(hardware_concurrency, 64) servers, started lazily with the environment
// and working-folder rules of a one-shot compile child (run_process), reused,
// and retired after kCompileServerRecycleAfter compiles so that a leak inside
// NVRTC cannot grow without end. A request that times out kills its server's
// process group; a server that dies, times out or says too much is replaced
// by a fresh one for the next request. Servers die with their owner: this
// process closes their stdin at exit and reaps them, and a killed owner leaves
// them reading EOF, after which they exit.
#include <sys/types.h>

#include <cstddef>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace tessera::detail {

inline constexpr int kCompileServerMaxCount = 64;
// A compile child's or server's answer is the one stdout line that starts
// with this: `{"TESSERA_COMPILE": CompileOutput}`; other lines are noise.
inline constexpr std::string_view kCompileAnswerKey = "TESSERA_COMPILE";
inline constexpr std::string_view kCompileAnswerPrefix = "{\"TESSERA_COMPILE\":";
static_assert(kCompileAnswerPrefix.size() == kCompileAnswerKey.size() + 4 && kCompileAnswerPrefix.substr(0, 2) == "{\"" &&
                  kCompileAnswerPrefix.substr(2, kCompileAnswerKey.size()) == kCompileAnswerKey &&
                  kCompileAnswerPrefix.substr(2 + kCompileAnswerKey.size()) == "\":",
              "the answer prefix is {\"<kCompileAnswerKey>\":");
inline constexpr int kCompileServerRecycleAfter = 200;  // compiles per server, then a fresh one
// An idle server unused this long is closed at the next request: a burst of
// compiles starts up to one server per core, each holding NVRTC's memory, and
// a quieter load (or several trainer processes on one machine) needs fewer.
inline constexpr double kCompileServerIdleCloseSeconds = 120;
// "off" (or "0"): one process per compile, as before the servers. "nopch":
// servers without NVRTC's precompiled headers; "pch": servers with them;
// unset or "on": servers, with precompiled headers as kCompileServerPchDefault.
inline constexpr const char* kCompileServerEnvVar = "TESSERA_COMPILE_SERVER";
// Off: measured on 2026-11-27 (docs/harness.md, "Compile servers"): identical
// cubins, but a saving only where every candidate shares its #include prefix.
inline constexpr bool kCompileServerPchDefault = false;

// TEST ONLY (tests/harness/compile_server_test.cpp). A server started while
// this process has kCompileServerFaultsEnvVar set to kCompileServerFaultsValue
// aborts on a request whose text holds the crash marker and hangs on one that
// holds the hang marker. Both are needed: a candidate controls its source,
// never the harness's environment, and without the variable the markers are
// plain text. The variable is passed to servers by name (it is not on the
// compile child's allow-list) and never to one-shot compile children.
inline constexpr const char* kCompileServerFaultsEnvVar = "TESSERA_TEST_COMPILE_SERVER_FAULTS";
inline constexpr const char* kCompileServerFaultsValue = "plant-crash-and-hang-markers";
inline constexpr const char* kCompileServerCrashMarker = "TESSERA_TEST_PLANTED_SERVER_CRASH_7c41e9";
inline constexpr const char* kCompileServerHangMarker = "TESSERA_TEST_PLANTED_SERVER_HANG_7c41e9";

struct CompileServerSetting {
  bool servers = true;
  bool pch = kCompileServerPchDefault;
};
// From kCompileServerEnvVar, read on every call (tests and benches switch it).
CompileServerSetting compile_server_setting();

// Which servers, where, and how much output one answer may take.
struct CompileServerSpec {
  std::filesystem::path exe;       // the tessera binary
  bool pch = false;                // NVRTC's automatic precompiled headers, in a private folder
  std::filesystem::path work_dir;  // its working folder: the one-shot child's (cache/child-work)
  std::size_t output_limit = 0;    // bytes read per request; past it the server is killed
};

struct CompileServerReply {
  enum class Kind {
    answer,       // `answer` holds the answer line
    died,         // the server ended without an answer (exit_code as run_process gives it)
    timed_out,    // no answer in time: its process group was killed
    overflow,     // more than output_limit bytes without an answer: killed
    unavailable,  // no server could be started (`error`)
    closed,       // the pool is shut down (this process exits), or this is a forked copy: use a one-shot child
  };
  Kind kind = Kind::unavailable;
  std::string answer;
  std::string output;  // what the server wrote before its answer or death (noise, its stderr)
  int exit_code = -1;
  std::string error;
};

struct CompileServerLimits {
  int max_servers = 0;    // 0: min(hardware_concurrency, kCompileServerMaxCount)
  int recycle_after = kCompileServerRecycleAfter;
  double idle_close_s = kCompileServerIdleCloseSeconds;  // 0: never
};

struct CompileServerStats {
  long long started = 0;   // servers started since the last configure()
  long long answered = 0;  // requests a server answered
  long long recycled = 0;  // servers retired after recycle_after compiles
  long long closed_idle = 0;  // servers closed after idle_close_s unused
  int live = 0;            // server processes now, idle or busy
  int peak_live = 0;       // most at once since the last configure()
  int max_servers = 0;     // the limit in force
};

class CompileServers {
public:
  static CompileServers& instance();
  // Sends one request line (a CompileChildRequest, one line of JSON) to a
  // server of `spec` and waits for its answer, at most timeout_s.
  CompileServerReply ask(const CompileServerSpec& spec, const std::string& request_line, double timeout_s);
  CompileServerStats stats() const;
  // New limits (tests, benches): idle servers are closed, the counts of
  // stats() start again. Busy servers finish their request first.
  void configure(const CompileServerLimits& limits);
  // Closes every idle server and refuses new requests (kind `closed`);
  // busy ones are closed when their request ends. Run at exit.
  void shutdown();

  struct Server;  // one server process (compile_servers.cpp)
  CompileServers();
  ~CompileServers();
  CompileServers(const CompileServers&) = delete;
  CompileServers& operator=(const CompileServers&) = delete;

private:
  // Closes the idle servers unused for longer than the limit's idle_close_s.
  void close_stale();
  // Takes idle servers out under the lock (`take`, which may change the pool
  // too), closes and reaps them outside it, then frees their slots (`after`,
  // under the lock again, with how many were closed). With only_if_taken, a
  // `take` that took none ends it there (`after` is not called).
  void close_idle(const std::function<void(std::vector<std::unique_ptr<Server>>&)>& take,
                  const std::function<void(int)>& after, bool only_if_taken = false);
  // Back to the idle list, or closed (not reusable, recycled, pool shut down).
  void release(std::unique_ptr<Server> server, bool reusable);
  struct State;
  std::unique_ptr<State> state_;
  pid_t owner_;  // the process that started the servers
};

}  // namespace tessera::detail
