// The two policies, confine_self() and its report.
#include <sys/resource.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "confine/confine.hpp"
#include "core/error.hpp"
#include "core/json_read.hpp"
#include "confine/detail/confine_parts.hpp"

namespace tessera {

namespace {

// What the runner may read: the system's trees (libraries, the driver's
// /proc and /sys entries, device nodes), never home directories, /run or
// /var (where mounted secrets and session sockets live).
constexpr const char* kSystemReadRoots[] = {"/usr", "/lib", "/lib64", "/lib32", "/bin", "/sbin",
                                            "/etc", "/opt", "/proc", "/sys", "/dev"};

void add_note(std::string& notes, const std::string& note) {
  if (note.empty()) return;
  if (!notes.empty()) notes += "; ";
  notes += note;
}

bool limited(int resource) {
  rlimit r{};
  return ::getrlimit(resource, &r) == 0 && r.rlim_cur != RLIM_INFINITY;
}

// The directories of a PATH-like variable ("a:b:c").
std::vector<std::filesystem::path> path_list(const char* var) {
  std::vector<std::filesystem::path> out;
  const char* v = std::getenv(var);
  if (!v) return out;
  std::string s(v);
  for (std::size_t start = 0; start <= s.size();) {
    const auto colon = std::min(s.find(':', start), s.size());
    if (colon > start) out.emplace_back(s.substr(start, colon - start));
    start = colon + 1;
  }
  return out;
}

// The limits and session enter_confined_child() set, as this process has them.
void describe_spawn_state(ProtectionReport& r) {
  rlimit core{};
  r.rlimits = ::getrlimit(RLIMIT_CORE, &core) == 0 && core.rlim_cur == 0 && limited(RLIMIT_FSIZE) &&
              limited(RLIMIT_NOFILE) && limited(RLIMIT_NPROC);
  r.own_session = ::getsid(0) == ::getpid();
  if (!r.rlimits) add_note(r.notes, "rlimits not set (not started by the harness's confined spawn)");
  else if (::geteuid() == 0) add_note(r.notes, "running as root: the kernel does not enforce the process limit");
  if (!r.own_session) add_note(r.notes, "shares its parent's session");
}

}  // namespace

void ProtectionReport::merge(const ProtectionReport& o) {
  seccomp = seccomp || o.seccomp;
  landlock = landlock || o.landlock;
  landlock_abi = std::max(landlock_abi, o.landlock_abi);
  rlimits = rlimits || o.rlimits;
  own_session = own_session || o.own_session;
  gpu_isolated = gpu_isolated || o.gpu_isolated;
  if (notes != o.notes) add_note(notes, o.notes);
}

void to_json(nlohmann::json& j, const ProtectionReport& r) {
  j = {{"seccomp", r.seccomp},         {"landlock", r.landlock},       {"landlock_abi", r.landlock_abi},
       {"rlimits", r.rlimits},         {"own_session", r.own_session}, {"gpu_isolated", r.gpu_isolated},
       {"notes", r.notes}};
}

void from_json(const nlohmann::json& j, ProtectionReport& r) {
  r.seccomp = j.value("seccomp", false);
  r.landlock = j.value("landlock", false);
  r.landlock_abi = integer_value<int>(j, "landlock_abi", 0);  // a float out of range: bad input, not UB
  r.rlimits = j.value("rlimits", false);
  r.own_session = j.value("own_session", false);
  r.gpu_isolated = j.value("gpu_isolated", false);
  r.notes = j.value("notes", "");
}

std::string confinement_disabled_reason() {
  const char* v = std::getenv(kConfineEnvVar);
  if (v && std::string(v) == "0") return std::string("turned off by the user (") + kConfineEnvVar + "=0)";
  return {};
}

bool cuda_tool_attached() {
  for (const char* var : {"CUDA_INJECTION64_PATH", "LD_PRELOAD"})
    if (const char* v = std::getenv(var); v && *v) return true;
  return false;
}

ConfinePolicy worker_policy(const std::filesystem::path& scratch, std::vector<std::filesystem::path> writable) {
  ConfinePolicy p;
  p.name = "worker";
  p.scratch = scratch;
  p.writable = std::move(writable);
  // Its runner inherits this domain, and the runner's /proc entries (which
  // the CUDA runtime reads, and writes to name its threads) do not exist yet
  // when the worker confines itself: so reads are not restricted and /proc
  // may be written. The worker runs no candidate host code; the runner,
  // which does, reads only the system's trees and its own /proc entries.
  p.writable.emplace_back("/proc");
  p.allow_process_creation = true;  // it starts the runner
  p.allow_unix_sockets = true;      // the runner's CUDA initialisation binds one
  p.allow_sockets = cuda_tool_attached();
  return p;
}

ConfinePolicy runner_policy(const std::filesystem::path& scratch, std::vector<std::filesystem::path> readable) {
  ConfinePolicy p;
  p.name = "runner";
  p.scratch = scratch;
  std::vector<std::filesystem::path> reads(std::begin(kSystemReadRoots), std::end(kSystemReadRoots));
  for (const char* var : {"CUDA_HOME", "CUDA_PATH"})
    if (const char* v = std::getenv(var); v && *v) reads.emplace_back(v);
  for (auto& dir : path_list("LD_LIBRARY_PATH")) reads.push_back(std::move(dir));
  for (auto& r : readable) reads.push_back(std::move(r));
  p.readable = std::move(reads);
  p.kill_on_violation = true;
  p.allow_sockets = cuda_tool_attached();
  return p;
}

ProtectionReport confine_self(const ConfinePolicy& policy, ConfineStep step) {
  TESSERA_REQUIRE(!policy.scratch.empty(), "a confinement policy needs a scratch directory");
  ProtectionReport r;
  describe_spawn_state(r);
  r.landlock_abi = detail::landlock_abi();
  if (auto off = confinement_disabled_reason(); !off.empty()) {
    add_note(r.notes, "seccomp and Landlock " + off);
    return r;
  }
  if (policy.allow_sockets) add_note(r.notes, "sockets allowed: a CUDA tool is attached");
  if (step != ConfineStep::syscalls) {
    const auto ll = detail::install_landlock(policy, r.landlock_abi);
    r.landlock = ll.installed;
    add_note(r.notes, ll.installed || ll.note.empty() ? ll.note : "Landlock off: " + ll.note);
  }
  if (step != ConfineStep::filesystem) {
    const auto sc = detail::install_seccomp(policy);
    r.seccomp = sc.installed;
    if (!sc.installed) add_note(r.notes, "seccomp off: " + sc.note);
  }
  return r;
}

}  // namespace tessera
