#pragma once
// A child process the worker talks to in JSON lines over two pipes (the TU
// runner). Every wait is bounded; the destructor kills the child if it is
// still there, so nothing it started outlives the evaluation that started it.
#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "confine/confine.hpp"

namespace tessera::worker {

struct ChildExit {
  bool exited = false;  // false: still running
  int code = -1;        // exit code, when it exited normally
  int signal = 0;       // the signal that ended it, or 0
  int wait_status = 0;  // as waitpid gave it (confinement_exit_reason reads it)
  std::string describe() const;  // "exit code 3", "killed by SIGSEGV"
};

class ChildProcess {
public:
  // Started confined (spawn_confined: its environment, working directory,
  // limits, own session and process group, so a kill reaches whatever it
  // forked). Its stdin and stdout are the pipes; `spec.fds` may add others
  // (its stderr, say); 0 and 1 in it are replaced.
  explicit ChildProcess(ConfinedSpawn spec);
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const { return pid_; }
  // False when the child is gone (the write failed).
  bool send_line(const std::string& line);
  // The next complete line, or nullopt on timeout or end of output.
  std::optional<std::string> read_line(double timeout_s);
  bool timed_out() const { return timed_out_; }
  // Kills the child's process group and reaps it.
  void kill() noexcept;
  // Waits up to timeout_s for it to end by itself; does not kill.
  ChildExit wait(double timeout_s);

private:
  pid_t pid_ = -1;
  int to_child_ = -1, from_child_ = -1;
  std::string buffer_;
  bool timed_out_ = false;
  ChildExit exit_;
};

}  // namespace tessera::worker
