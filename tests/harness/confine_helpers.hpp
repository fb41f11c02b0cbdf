#pragma once
// Running a function in a forked child that confines itself first, and
// setting environment variables for the length of a test.
#include <sys/wait.h>

#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>

#include "confine/confine.hpp"
#include "tests/testing.hpp"  // ScopedEnv

namespace tessera::testing {

struct ConfinedRun {
  ProtectionReport report;  // what the child could install
  int status = 0;           // from waitpid
  std::string err;          // the child's stderr
  int code() const { return WIFEXITED(status) ? WEXITSTATUS(status) : -1; }
  bool killed_by(int sig) const { return WIFSIGNALED(status) && WTERMSIG(status) == sig; }
};

// Forks; the child takes the runner's session and limits, confines itself
// with `policy`, reports, runs `act` and exits with its return value (without
// running exit handlers: it is a copy of the test process).
ConfinedRun run_confined(const ConfinePolicy& policy, const std::function<int()>& act);

// Secrets a candidate must never see, with their values.
const std::map<std::string, std::string>& planted_secrets();
// Empty when `env_text` ("NAME=value" lines) shows none of them, else which.
std::string leaked_secrets(const std::string& env_text);

}  // namespace tessera::testing
