#pragma once
// Runs a program to completion with a time limit and an output limit. Output
// goes to files, not pipes, so a child that prints gigabytes cannot deadlock
// us; only the first `output_limit` bytes are read back. On timeout the whole
// process group is killed (nvcc's cicc/ptxas grandchildren included).
#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

namespace tessera {

struct ProcessResult {
  int exit_code = -1;
  bool timed_out = false;
  bool spawn_failed = false;
  std::string output;  // stdout then stderr, truncated to the limit
  std::string error;   // why it could not be run
};

// Where a started child's standard streams go.
struct SpawnFiles {
  std::filesystem::path in;   // stdin from this file; empty: this process's stdin
  std::filesystem::path out;  // stdout to this file
  std::filesystem::path err;  // stderr to this file; empty: the same file as stdout
  // A descriptor of this process (a pipe's end, opened O_CLOEXEC so that no
  // other child inherits it) as the child's stdin or stdout, in place of `in`
  // or `out`: a long-lived child talking in lines (the compile servers).
  int in_fd = -1;
  int out_fd = -1;
  // Close every descriptor above stderr in the child, whether or not it is
  // close-on-exec: a long-lived child must not keep open what this process
  // opened without O_CLOEXEC (a lock, a listening socket) after it closes it.
  bool close_other_fds = false;
  bool append = false;        // add to out (and err) rather than truncate them
  int mode = 0600;            // permissions of a file created for out or err
};

// Starts `exe` with `args` and exactly the environment `env` ("NAME=value"),
// in `work_dir` (empty: this process's), in a process group of its own, led by
// the child (so killpg ends its grandchildren too). posix_spawn, not fork:
// glibc starts the child with vfork semantics, so nothing of this process's
// address space is copied, where a fork copies the page tables under the
// address-space lock that every other thread's fork and page fault then waits
// for (the processes that start most children are large and threaded:
// tessera serve, a trainer with torch and CUDA up). Returns the pid, or -1
// with `error` saying why.
pid_t spawn_process(const std::filesystem::path& exe, const std::vector<std::string>& args,
                    const std::vector<std::string>& env, const SpawnFiles& files,
                    const std::filesystem::path& work_dir, std::string* error);

ProcessResult run_process(const std::filesystem::path& exe, const std::vector<std::string>& args,
                          const std::string& stdin_data, double timeout_seconds, std::size_t output_limit,
                          const std::filesystem::path& work_dir);

// The running executable (/proc/self/exe).
std::filesystem::path self_executable();
// The tessera binary that serves `__compile` and `__worker`: $TESSERA_BINARY,
// else this process when it is tessera, else `bin/tessera` beside or above
// it (test binaries in a build tree). Never a test binary: re-running one of
// those would run its tests recursively. Throws unavailable when none is found.
std::filesystem::path tessera_executable();

}  // namespace tessera
