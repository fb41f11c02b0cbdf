#pragma once
// Shared test helpers.
#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/result.hpp"

namespace tessera::testing {

// A fake evaluator's success: `r` verified (`trials` of `trials`) and timed
// cold at `us`; the baselines are the caller's.
void mark_timed_ok(EvalResult& r, double us, int trials = 5);

// Empty when a usable CUDA GPU is present, else the reason there is none.
std::string gpu_unavailable_reason();

// Pids of this process's descendants whose command line contains `needle`
// (e.g. "__worker": the sandbox worker), from /proc.
std::vector<int> descendants_running(const std::string& needle);

// A shell command's exit code (-1 when it did not exit) and its stdout (add
// 2>&1 to the command for stderr too).
struct CommandResult {
  int code = -1;
  std::string out;
};
CommandResult run_command(const std::string& shell_command);

// What was written to a temporary file (std::tmpfile standing in for a
// terminal or a pipe), up to 4096 bytes; closes it.
std::string contents_and_close(std::FILE* f);

// Sets environment variables for the life of the object (child processes
// started meanwhile inherit them), then puts back what was there.
class ScopedEnv {
public:
  explicit ScopedEnv(const std::map<std::string, std::string>& vars);
  // One variable; a null value unsets it for the scope.
  ScopedEnv(const std::string& name, const char* value);
  ScopedEnv(const std::string& name, const std::string& value) : ScopedEnv(name, value.c_str()) {}
  ~ScopedEnv();
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

private:
  void save(const std::string& name);
  std::map<std::string, std::optional<std::string>> saved_;
};

}  // namespace tessera::testing

// Skips the current test, printing why, when there is no GPU.
#define TESSERA_REQUIRE_GPU()                                                   \
  do {                                                                          \
    const std::string reason_ = ::tessera::testing::gpu_unavailable_reason();   \
    if (!reason_.empty()) GTEST_SKIP() << "no GPU: " << reason_;                \
  } while (0)
