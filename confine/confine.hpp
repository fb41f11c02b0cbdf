#pragma once
// Confinement of the processes that hold candidate code (docs/harness.md,
// "Sandbox and confinement"). Three layers, each installed where the kernel
// offers it and reported where it does not:
//   - at spawn: an allow-listed environment (no API keys, no cloud
//     credentials), an own session and process group, rlimits, a private
//     scratch directory as the working directory (spawn_confined(), or
//     enter_confined_child() from another spawner's pre-exec hook);
//   - in the process, once its CUDA context exists: Landlock (writes only
//     beneath the policy's directories; for the runner, reads too) and a
//     seccomp filter (no sockets, no ptrace, no signals to other processes,
//     no process creation unless the policy allows it) (confine_self()).
// The worker (`tessera __worker`) gets worker_policy(): it runs no candidate
// host code, only device code, so this is defence in depth, and it may spawn
// the runner. The runner (candidate host code under graph capture) gets
// runner_policy(): the strictest one.
#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace tessera {

// Limits of a confined child, set between fork and exec. Sizes in bytes.
inline constexpr std::uint64_t kWorkerMaxFileBytes = 1ull << 30;   // its log included: device printf floods stop here
inline constexpr std::uint64_t kRunnerMaxFileBytes = 64ull << 20;  // a runner needs no file of its own
inline constexpr std::uint64_t kWorkerMaxOpenFiles = 4096;
inline constexpr std::uint64_t kRunnerMaxOpenFiles = 1024;
// RLIMIT_NPROC counts every thread of the user, so it is set to the threads
// the machine runs now plus this many: a fork or thread bomb stops there.
inline constexpr std::uint64_t kWorkerProcessHeadroom = 1024;
inline constexpr std::uint64_t kRunnerProcessHeadroom = 256;

// Wording of the reasons a confined process's death is given (the fault
// corpus and the runner's verdicts match these substrings).
inline constexpr const char* kForbiddenSyscallReason = "host code made a forbidden system call";
inline constexpr const char* kFileSizeLimitReason = "host code wrote past the sandbox's file-size limit";
// Set to 0 by the user (never by a candidate: it reaches no parent) to run
// without seccomp and Landlock, e.g. to tell a confinement problem from a
// CUDA one. Reported by doctor and in every worker's protections.
inline constexpr const char* kConfineEnvVar = "TESSERA_CONFINE";

struct ChildLimits {
  std::uint64_t max_file_bytes = kWorkerMaxFileBytes;
  std::uint64_t max_open_files = kWorkerMaxOpenFiles;
  std::uint64_t process_headroom = kWorkerProcessHeadroom;
  // SIGKILL when the spawning thread exits. Only for a child spawned by a
  // thread that outlives it (the worker's main thread spawning the runner).
  bool die_with_parent = false;
};
ChildLimits worker_limits();
ChildLimits runner_limits();

struct ConfinePolicy {
  std::string name;                             // "worker", "runner": for reports and logs
  std::filesystem::path scratch;                // private directory: the one place it may create files
  std::vector<std::filesystem::path> writable;  // other trees it may write (the autotune cache)
  // nullopt: reads unrestricted; else reads only beneath these (plus scratch
  // and writable). Files and directories that do not exist are skipped.
  // "/proc" stands for the process's own /proc entries and the kernel's,
  // never another process's (whose environ may hold secrets).
  std::optional<std::vector<std::filesystem::path>> readable;
  bool allow_process_creation = false;  // fork, vfork, clone without CLONE_THREAD, execve
  // A forbidden system call kills the process with SIGSYS (and names the
  // call on stderr) instead of failing with EPERM: the runner, whose death
  // the worker turns into a `rejected` verdict.
  bool kill_on_violation = false;
  // Socket rules off: only when a CUDA tool (compute-sanitizer, Nsight) was
  // attached by the user, whose injected library talks to its front end.
  bool allow_sockets = false;
  // Unix-domain sockets allowed (socket(AF_UNIX), bind, listen, ...), other
  // families refused: the worker, because its runner inherits its filter and
  // the CUDA runtime's initialisation in the runner creates and binds one
  // (it fails with cudaErrorOperatingSystem otherwise). The runner's own
  // filter, installed once its context exists, refuses every socket.
  bool allow_unix_sockets = false;
};

struct ProtectionReport {
  bool seccomp = false;
  bool landlock = false;
  int landlock_abi = 0;  // 0: the kernel has no Landlock
  bool rlimits = false;
  bool own_session = false;
  bool gpu_isolated = false;  // exactly one GPU visible (the caller knows; confine_self leaves it false)
  std::string notes;          // why something is off, one clause per item, "; "-separated
  // Takes the layers `other` installed (a confine_self() in two steps).
  void merge(const ProtectionReport& other);
};
void to_json(nlohmann::json& j, const ProtectionReport& r);
void from_json(const nlohmann::json& j, ProtectionReport& r);

// The worker: writes only to its scratch directory, the autotune cache and
// /dev and /proc; reads everything; no sockets but unix-domain ones, no
// ptrace, no signals to its parent; may spawn the runner.
ConfinePolicy worker_policy(const std::filesystem::path& scratch, std::vector<std::filesystem::path> writable);
// The runner: writes only to its scratch directory and /dev, reads only the
// system's trees, the CUDA install, `readable` (its artifact) and scratch; no
// process creation, no sockets, no signals but to itself; a violation kills it.
ConfinePolicy runner_policy(const std::filesystem::path& scratch, std::vector<std::filesystem::path> readable);

// Installs what the kernel offers of `policy` in this process (sets
// no_new_privs). Irreversible. Never throws for a feature the kernel lacks
// (the report says so); throws tessera::Error for a bad policy.
// Landlock binds the calling thread and the threads it starts afterwards,
// not threads already running; seccomp binds every thread. A process whose
// libraries start threads (the CUDA runtime does) takes `filesystem` before
// they start and `syscalls` when its set-up is done, or `all` at once when
// its earlier threads run nothing of the candidate's (the worker).
enum class ConfineStep { all, filesystem, syscalls };
ProtectionReport confine_self(const ConfinePolicy& policy, ConfineStep step = ConfineStep::all);

// Non-empty when the user turned confinement off (kConfineEnvVar=0):
// confine_self() then installs nothing and its report says why.
std::string confinement_disabled_reason();
// A CUDA tool (compute-sanitizer, Nsight) was attached by the user:
// CUDA_INJECTION64_PATH or LD_PRELOAD is set. Its injected library talks to
// its front end over a socket, so both policies then allow sockets.
bool cuda_tool_attached();

// Between fork and exec (async-signal-safe): own session and process group,
// rlimits, optionally death with the parent. `nproc` from process_limit().
// Returns 0, or the errno of the step that failed.
int enter_confined_child(const ChildLimits& limits, std::uint64_t nproc) noexcept;
std::uint64_t process_limit(const ChildLimits& limits);  // call before fork

// Spawns `exe` confined: the given environment, working directory, limits;
// `fds` maps child descriptors to parent ones (all others are closed).
// Throws tessera::Error when it cannot be started.
struct ConfinedSpawn {
  std::filesystem::path exe;
  std::vector<std::string> args;  // argv[1..]
  std::vector<std::string> env;   // "NAME=value"
  std::filesystem::path work_dir;
  ChildLimits limits;
  std::vector<std::pair<int, int>> fds;  // {child fd, parent fd}; 0, 1 and 2 default to /dev/null
};
pid_t spawn_confined(const ConfinedSpawn& spec);

// Why a confined process died, when its confinement killed it (SIGSYS: a
// forbidden system call, named from its stderr when it said; SIGXFSZ: the
// file-size limit); empty for any other end. `wait_status` from waitpid.
std::string confinement_exit_reason(int wait_status, std::string_view stderr_tail);

// --- Environment --------------------------------------------------------
// Secrets by name: *_KEY, *_TOKEN, *_SECRET, *PASSWORD*, *PASSWD*,
// *CREDENTIAL*, AWS_*, ... (case-insensitive). Never passed on.
bool is_secret_name(std::string_view name);
// What a child may inherit: PATH, HOME, locale, temp folders, the library
// and CUDA paths, CUDA_* and NV* settings, tessera's own cache/binary/nvcc
// settings, and a CUDA tool's injection variables. Secrets never.
bool is_inherited_name(std::string_view name);
// The allow-listed part of `parent` ("NAME=value" entries), then `overrides`.
// With a CUDA tool attached (CUDA_INJECTION64_PATH or LD_PRELOAD set in
// `parent`), every variable but a secret passes: the tool's own are unknown.
std::vector<std::string> sandbox_environment(const std::vector<std::string>& parent,
                                             const std::map<std::string, std::string>& overrides = {});
std::vector<std::string> current_environment();
// CUDA_VISIBLE_DEVICES for a child that must see only ordinal `device` of
// this process's devices ("2,3" + 1 -> "3"; unset + 1 -> "1").
std::string visible_device(const char* parent_visible_devices, int device);
// The worker's and the runner's environments (TMPDIR, and for the runner
// HOME, point into their scratch directory; the cache folder is pinned).
std::vector<std::string> worker_environment(int device, const std::filesystem::path& scratch);
std::vector<std::string> runner_environment(const std::filesystem::path& scratch);

// A private scratch directory, created 0700 under `parent` and removed with
// everything in it when this object goes.
class ScratchDir {
public:
  explicit ScratchDir(const std::filesystem::path& parent, std::string_view prefix);
  ~ScratchDir() noexcept;
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

private:
  std::filesystem::path path_;
};

// --- doctor --------------------------------------------------------------
// Forks throwaway children that install runner_policy() and try a socket, a
// fork, a write outside scratch and a signal to their parent; reports what
// was actually stopped. `gpu_isolated` is left to the caller.
struct ProbeResult {
  ProtectionReport report;  // what the child could install
  bool socket_blocked = false, fork_blocked = false, write_outside_blocked = false, signal_parent_blocked = false;
  std::string error;  // the probe itself failed (fork impossible, ...)
};
ProbeResult probe_protections();
void to_json(nlohmann::json& j, const ProbeResult& r);

}  // namespace tessera
