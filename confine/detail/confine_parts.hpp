#pragma once
// The layers confine_self() installs, one file each.
#include <string>

#include "confine/confine.hpp"

namespace tessera::detail {

struct LayerResult {
  bool installed = false;
  std::string note;  // why not, or what was left out
};

// Landlock's ABI version, 0 when the kernel has none (or it is disabled).
int landlock_abi();
// Landlock on the calling thread and the threads it starts afterwards.
LayerResult install_landlock(const ConfinePolicy& policy, int abi);
// The seccomp filter on every thread of the process (TSYNC).
LayerResult install_seccomp(const ConfinePolicy& policy);
// Name of a system call the filter refuses, or nullptr (async-signal-safe).
const char* denied_syscall_name(long nr) noexcept;

// Both layers require it (and it keeps a setuid binary from regaining rights).
bool set_no_new_privs() noexcept;

}  // namespace tessera::detail
