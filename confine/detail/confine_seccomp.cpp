// The seccomp filter: hand-written classic BPF (no libseccomp: the GPU image
// ships only its runtime library). Checks the architecture first, then the
// call number; the few calls whose arguments matter (clone's flags, the
// target of a signal) get a small block of their own. Every block ends in a
// return, so no jump spans more than a few instructions.
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "confine/detail/confine_parts.hpp"

namespace tessera::detail {

namespace {

#if defined(__x86_64__)
constexpr std::uint32_t kAuditArch = AUDIT_ARCH_X86_64;
constexpr bool kHasX32 = true;  // x32 calls share the arch value; their numbers carry this bit
constexpr std::uint32_t kX32SyscallBit = 0x40000000u;
#elif defined(__aarch64__)
constexpr std::uint32_t kAuditArch = AUDIT_ARCH_AARCH64;
constexpr bool kHasX32 = false;
constexpr std::uint32_t kX32SyscallBit = 0;
#else
#error "seccomp filter: add this architecture's AUDIT_ARCH value"
#endif

constexpr std::uint32_t kOffsetNr = offsetof(seccomp_data, nr);
constexpr std::uint32_t kOffsetArch = offsetof(seccomp_data, arch);
// The low 32 bits of argument i (pids and clone's CLONE_THREAD live there).
constexpr std::uint32_t arg_low(int i) {
  return static_cast<std::uint32_t>(offsetof(seccomp_data, args)) + 8u * static_cast<std::uint32_t>(i) +
         (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? 0u : 4u);
}

struct Named {
  long nr;
  const char* name;
};
#define TESSERA_SYSCALL(x) Named{SYS_##x, #x}

// Network: a candidate has nothing to send and no one to send it to.
constexpr Named kSocketCalls[] = {TESSERA_SYSCALL(socket), TESSERA_SYSCALL(socketpair), TESSERA_SYSCALL(connect),
                                  TESSERA_SYSCALL(bind),   TESSERA_SYSCALL(listen),     TESSERA_SYSCALL(accept),
                                  TESSERA_SYSCALL(accept4)};
// Reaching into other processes, the kernel's own state, or around the
// filter (io_uring performs opens and connects without system calls).
constexpr Named kAlwaysDenied[] = {
    TESSERA_SYSCALL(ptrace),          TESSERA_SYSCALL(process_vm_readv), TESSERA_SYSCALL(process_vm_writev),
    TESSERA_SYSCALL(pidfd_open),      TESSERA_SYSCALL(pidfd_getfd),      TESSERA_SYSCALL(pidfd_send_signal),
    TESSERA_SYSCALL(tkill),           TESSERA_SYSCALL(io_uring_setup),   TESSERA_SYSCALL(io_uring_enter),
    TESSERA_SYSCALL(io_uring_register), TESSERA_SYSCALL(bpf),            TESSERA_SYSCALL(userfaultfd),
    TESSERA_SYSCALL(keyctl),          TESSERA_SYSCALL(add_key),          TESSERA_SYSCALL(request_key),
    TESSERA_SYSCALL(mount),           TESSERA_SYSCALL(umount2),          TESSERA_SYSCALL(pivot_root),
    TESSERA_SYSCALL(chroot),          TESSERA_SYSCALL(unshare),          TESSERA_SYSCALL(setns),
    TESSERA_SYSCALL(open_tree),       TESSERA_SYSCALL(move_mount),       TESSERA_SYSCALL(fsopen),
    TESSERA_SYSCALL(fsmount),         TESSERA_SYSCALL(init_module),      TESSERA_SYSCALL(finit_module),
    TESSERA_SYSCALL(delete_module),   TESSERA_SYSCALL(kexec_load),       TESSERA_SYSCALL(reboot),
    TESSERA_SYSCALL(swapon),          TESSERA_SYSCALL(swapoff),          TESSERA_SYSCALL(open_by_handle_at),
    TESSERA_SYSCALL(name_to_handle_at),
#if defined(__x86_64__)
    TESSERA_SYSCALL(iopl),            TESSERA_SYSCALL(ioperm),
#endif
};
// New processes and new programs.
constexpr Named kProcessCreation[] = {
#if defined(__x86_64__)
    TESSERA_SYSCALL(fork), TESSERA_SYSCALL(vfork),
#endif
    TESSERA_SYSCALL(execve), TESSERA_SYSCALL(execveat)};
// Named only for the SIGSYS message; their arguments decide.
constexpr Named kArgumentChecked[] = {TESSERA_SYSCALL(clone),   TESSERA_SYSCALL(kill),
                                      TESSERA_SYSCALL(tgkill),  TESSERA_SYSCALL(rt_sigqueueinfo),
                                      TESSERA_SYSCALL(rt_tgsigqueueinfo)};
#undef TESSERA_SYSCALL

class Program {
public:
  void load(std::uint32_t offset) { code_.push_back(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offset)); }
  void ret(std::uint32_t action) { code_.push_back(BPF_STMT(BPF_RET | BPF_K, action)); }
  // if (A == k) fall through, else skip `skip` instructions.
  void if_equal(std::uint32_t k, std::uint8_t skip) { code_.push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, k, 0, skip)); }
  void jump(std::uint16_t op, std::uint32_t k, std::uint8_t jt, std::uint8_t jf) {
    code_.push_back(BPF_JUMP(op, k, jt, jf));
  }
  // `nr` returns `action`.
  void refuse(long nr, std::uint32_t action) {
    if_equal(static_cast<std::uint32_t>(nr), 1);
    ret(action);
  }
  std::vector<sock_filter>& code() { return code_; }

private:
  std::vector<sock_filter> code_;
};

constexpr std::uint32_t kAllow = SECCOMP_RET_ALLOW;

std::uint32_t deny_action(const ConfinePolicy& p) { return p.kill_on_violation ? SECCOMP_RET_TRAP : SECCOMP_RET_ERRNO | EPERM; }

// A signal call whose first argument is a process: allowed only to `self`
// (runner), or to anyone but the parent, its process group and "everyone"
// (worker: it must be able to stop its runner).
void signal_target_block(Program& p, long nr, const ConfinePolicy& policy) {
  const std::uint32_t deny = deny_action(policy);
  const auto self = static_cast<std::uint32_t>(::getpid());
  p.if_equal(static_cast<std::uint32_t>(nr), policy.allow_process_creation ? 6 : 4);
  p.load(arg_low(0));
  if (!policy.allow_process_creation) {
    p.jump(BPF_JMP | BPF_JEQ | BPF_K, self, 0, 1);
    p.ret(kAllow);
    p.ret(deny);
    return;
  }
  const auto parent = static_cast<std::uint32_t>(::getppid());
  const auto parent_group = static_cast<std::uint32_t>(-::getpgid(::getppid()));
  p.jump(BPF_JMP | BPF_JEQ | BPF_K, parent, 3, 0);
  p.jump(BPF_JMP | BPF_JEQ | BPF_K, static_cast<std::uint32_t>(-1), 2, 0);
  p.jump(BPF_JMP | BPF_JEQ | BPF_K, parent_group, 1, 0);
  p.ret(kAllow);
  p.ret(deny);
}

std::vector<sock_filter> build_filter(const ConfinePolicy& policy) {
  Program p;
  const std::uint32_t deny = deny_action(policy);
  p.load(kOffsetArch);
  p.jump(BPF_JMP | BPF_JEQ | BPF_K, kAuditArch, 1, 0);
  p.ret(SECCOMP_RET_KILL_PROCESS);  // another ABI's numbering: nothing below would mean anything
  p.load(kOffsetNr);
  if (kHasX32) {
    p.jump(BPF_JMP | BPF_JGE | BPF_K, kX32SyscallBit, 0, 1);
    p.ret(deny);
  }
  if (!policy.allow_sockets && policy.allow_unix_sockets) {
    // socket() decides the family; the other calls need its descriptor.
    p.if_equal(static_cast<std::uint32_t>(SYS_socket), 4);
    p.load(arg_low(0));
    p.jump(BPF_JMP | BPF_JEQ | BPF_K, AF_UNIX, 0, 1);
    p.ret(kAllow);
    p.ret(deny);
    p.load(kOffsetNr);
  } else if (!policy.allow_sockets) {
    for (const auto& c : kSocketCalls) p.refuse(c.nr, deny);
  }
  for (const auto& c : kAlwaysDenied) p.refuse(c.nr, deny);
  // glibc tries clone3 first and falls back to clone on ENOSYS; clone3's
  // flags sit in memory that BPF cannot read, clone's in a register.
  p.refuse(SYS_clone3, SECCOMP_RET_ERRNO | ENOSYS);
  if (!policy.allow_process_creation) {
    for (const auto& c : kProcessCreation) p.refuse(c.nr, deny);
    p.if_equal(static_cast<std::uint32_t>(SYS_clone), 4);
    p.load(arg_low(0));
    p.jump(BPF_JMP | BPF_JSET | BPF_K, CLONE_THREAD, 0, 1);
    p.ret(kAllow);  // a thread of this process
    p.ret(deny);
    p.load(kOffsetNr);
  }
  for (long nr : {SYS_kill, SYS_tgkill, SYS_rt_sigqueueinfo, SYS_rt_tgsigqueueinfo}) {
    signal_target_block(p, nr, policy);
    p.load(kOffsetNr);
  }
  p.ret(kAllow);
  return std::move(p.code());
}

// A refused call under kill_on_violation: name it on stderr, then die of
// SIGSYS (SA_RESETHAND restored the default action; the raise is delivered
// when the handler returns). Async-signal-safe: write() and raise() only.
void on_sigsys(int, siginfo_t* info, void*) {
  char msg[128];
  std::size_t n = 0;
  auto put = [&](const char* s) {
    while (*s && n + 1 < sizeof msg) msg[n++] = *s++;
  };
  put("tessera: forbidden system call ");
  const char* name = denied_syscall_name(info->si_syscall);
  if (name) {
    put(name);
  } else {
    char digits[24];
    int d = 0;
    for (unsigned long v = static_cast<unsigned long>(info->si_syscall); d == 0 || v; v /= 10) digits[d++] = static_cast<char>('0' + v % 10);
    while (d > 0 && n + 1 < sizeof msg) msg[n++] = digits[--d];
  }
  put("\n");
  (void)!::write(STDERR_FILENO, msg, n);
  ::raise(SIGSYS);
}

}  // namespace

const char* denied_syscall_name(long nr) noexcept {
  for (const auto& c : kSocketCalls)
    if (c.nr == nr) return c.name;
  for (const auto& c : kAlwaysDenied)
    if (c.nr == nr) return c.name;
  for (const auto& c : kProcessCreation)
    if (c.nr == nr) return c.name;
  for (const auto& c : kArgumentChecked)
    if (c.nr == nr) return c.name;
  return nullptr;
}

bool set_no_new_privs() noexcept { return ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0; }

LayerResult install_seccomp(const ConfinePolicy& policy) {
  if (!set_no_new_privs()) return {false, "no_new_privs refused"};
  if (policy.kill_on_violation) {
    struct sigaction sa {};
    sa.sa_sigaction = on_sigsys;
    sa.sa_flags = SA_SIGINFO | SA_RESETHAND;
    sigemptyset(&sa.sa_mask);
    ::sigaction(SIGSYS, &sa, nullptr);
  }
  auto code = build_filter(policy);
  sock_fprog prog{static_cast<unsigned short>(code.size()), code.data()};
  const long rc = ::syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &prog);
  if (rc == 0) return {true, ""};
  if (errno == ENOSYS || errno == EINVAL) return {false, "the kernel has no seccomp filters"};
  if (rc > 0) return {false, "a thread could not take the filter"};
  return {false, std::string("seccomp refused the filter: ") + std::strerror(errno)};
}

}  // namespace tessera::detail
