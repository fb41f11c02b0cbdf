// Landlock: the file system a confined process may write (and, for the
// runner, read), TCP it may not use, and signals it may not send outside its
// domain. Raw system calls: Debian 12's headers stop at ABI 2, so the newer
// constants are defined here, and the ruleset attribute is passed with the
// size the running kernel's ABI knows.
#include <fcntl.h>
#include <linux/landlock.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>

#include <fmt/format.h>

#include "core/error.hpp"
#include "confine/detail/confine_parts.hpp"

#ifndef __NR_landlock_create_ruleset
#define __NR_landlock_create_ruleset 444
#define __NR_landlock_add_rule 445
#define __NR_landlock_restrict_self 446
#endif
#ifndef LANDLOCK_ACCESS_FS_REFER
#define LANDLOCK_ACCESS_FS_REFER (1ULL << 13)  // ABI 2
#endif
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14)  // ABI 3
#endif
#ifndef LANDLOCK_ACCESS_NET_BIND_TCP
#define LANDLOCK_ACCESS_NET_BIND_TCP (1ULL << 0)  // ABI 4
#define LANDLOCK_ACCESS_NET_CONNECT_TCP (1ULL << 1)
#endif
#ifndef LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET
#define LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0)  // ABI 6
#define LANDLOCK_SCOPE_SIGNAL (1ULL << 1)
#endif

namespace tessera::detail {

namespace {

constexpr int kAbiRefer = 2, kAbiTruncate = 3, kAbiNet = 4, kAbiScope = 6;

// struct landlock_ruleset_attr as of ABI 6; older kernels take a prefix.
struct RulesetAttr {
  std::uint64_t handled_access_fs = 0;
  std::uint64_t handled_access_net = 0;
  std::uint64_t scoped = 0;
};
std::size_t attr_size(int abi) { return abi >= kAbiScope ? 24 : abi >= kAbiNet ? 16 : 8; }

constexpr std::uint64_t kWriteRights =
    LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_REMOVE_DIR | LANDLOCK_ACCESS_FS_REMOVE_FILE |
    LANDLOCK_ACCESS_FS_MAKE_CHAR | LANDLOCK_ACCESS_FS_MAKE_DIR | LANDLOCK_ACCESS_FS_MAKE_REG |
    LANDLOCK_ACCESS_FS_MAKE_SOCK | LANDLOCK_ACCESS_FS_MAKE_FIFO | LANDLOCK_ACCESS_FS_MAKE_BLOCK |
    LANDLOCK_ACCESS_FS_MAKE_SYM | LANDLOCK_ACCESS_FS_REFER | LANDLOCK_ACCESS_FS_TRUNCATE;
constexpr std::uint64_t kReadRights = LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR;
// The rights a rule on a file (not a directory) may carry.
constexpr std::uint64_t kFileRights = LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE |
                                      LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_TRUNCATE;
// Device nodes are opened for writing (the GPU's /dev/nvidia*, /dev/null),
// never created: files under /dev/shm cannot be made.
constexpr std::uint64_t kDeviceRights = LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_TRUNCATE;

std::uint64_t handled_fs(const ConfinePolicy& p, int abi) {
  std::uint64_t h = kWriteRights | (p.readable ? kReadRights : 0);
  if (abi < kAbiRefer) h &= ~LANDLOCK_ACCESS_FS_REFER;
  if (abi < kAbiTruncate) h &= ~LANDLOCK_ACCESS_FS_TRUNCATE;
  return h;
}

class Fd {
public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() noexcept {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

private:
  int fd_;
};

// Allows `rights` beneath `path`. A path that does not exist is skipped
// (false); any other failure is a tessera bug and throws.
bool add_rule(int ruleset, const std::filesystem::path& path, std::uint64_t rights) {
  Fd fd(::open(path.c_str(), O_PATH | O_CLOEXEC));
  if (fd.get() < 0) return false;
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return false;
  if (!S_ISDIR(st.st_mode)) rights &= kFileRights;
  if (rights == 0) return false;
  landlock_path_beneath_attr attr{};
  attr.allowed_access = rights;
  attr.parent_fd = fd.get();
  if (::syscall(__NR_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &attr, 0) != 0)
    throw Error(fmt::format("landlock: cannot add a rule for {}: {}", path.string(), std::strerror(errno)));
  return true;
}

// "/proc" in a readable list stands for the parts of /proc a confined
// process may read: its own directory and the kernel's files, never another
// process's (the harness's environ holds API keys; Landlock's ptrace rule does
// not cover environ reads).
void add_proc_rules(int ruleset, std::uint64_t rights) {
  add_rule(ruleset, "/proc/self", rights);  // resolves to /proc/<our pid>, threads included
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") == std::string::npos) continue;  // a process
    if (name == "self" || name == "thread-self") continue;
    add_rule(ruleset, e.path(), rights);
  }
}

}  // namespace

int landlock_abi() {
  const long v = ::syscall(__NR_landlock_create_ruleset, nullptr, 0, LANDLOCK_CREATE_RULESET_VERSION);
  return v > 0 ? static_cast<int>(v) : 0;
}

LayerResult install_landlock(const ConfinePolicy& policy, int abi) {
  if (abi <= 0) return {false, "the kernel has no Landlock (needs Linux 5.13+ with landlock in lsm=)"};
  if (!set_no_new_privs()) return {false, "no_new_privs refused"};
  RulesetAttr attr;
  const std::uint64_t handled = handled_fs(policy, abi);
  attr.handled_access_fs = handled;
  if (abi >= kAbiNet && !policy.allow_sockets)
    attr.handled_access_net = LANDLOCK_ACCESS_NET_BIND_TCP | LANDLOCK_ACCESS_NET_CONNECT_TCP;
  if (abi >= kAbiScope)
    attr.scoped = LANDLOCK_SCOPE_SIGNAL | (policy.allow_sockets ? 0 : LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET);
  Fd ruleset(static_cast<int>(::syscall(__NR_landlock_create_ruleset, &attr, attr_size(abi), 0)));
  if (ruleset.get() < 0) return {false, std::string("landlock refused the ruleset: ") + std::strerror(errno)};

  if (policy.scratch.empty() || !add_rule(ruleset.get(), policy.scratch, handled))
    throw Error(Error::Kind::internal, "landlock: the policy's scratch directory is missing: " + policy.scratch.string());
  std::string skipped;
  for (const auto& w : policy.writable)
    if (!add_rule(ruleset.get(), w, handled)) skipped.append(" ").append(w.string());
  add_rule(ruleset.get(), "/dev", (kDeviceRights | kReadRights) & handled);
  // The process's own threads' files (comm): the CUDA runtime names the
  // threads it starts, and its initialisation fails (cudaErrorOperatingSystem)
  // when it cannot. Nothing of another process, nothing that can be created.
  add_rule(ruleset.get(), "/proc/self/task", (kDeviceRights | kReadRights) & handled);
  if (policy.readable) {
    for (const auto& r : *policy.readable) {
      if (r == "/proc") add_proc_rules(ruleset.get(), kReadRights & handled);
      else add_rule(ruleset.get(), r, kReadRights & handled);
    }
  }

  if (::syscall(__NR_landlock_restrict_self, ruleset.get(), 0) != 0)
    return {false, std::string("landlock_restrict_self failed: ") + std::strerror(errno)};
  std::string note;
  if (abi < kAbiTruncate) note += "Landlock ABI < 3: truncation of existing files is not covered; ";
  if (abi < kAbiNet) note += "Landlock ABI < 4: no TCP rules (seccomp still refuses sockets); ";
  if (abi < kAbiScope) note += "Landlock ABI < 6: signals are limited by seccomp alone; ";
  if (!skipped.empty()) note += "writable paths missing, left out:" + skipped + "; ";
  if (!note.empty()) note.erase(note.size() - 2);
  return {true, note};
}

}  // namespace tessera::detail
