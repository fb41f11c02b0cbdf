// One spelling of the mode on every command that evaluates (cli/sandbox_args.hpp):
// --mode auto|full|compile_only, --compile-only for --mode compile_only, and
// --sandbox-options for any other sandbox setting, read strictly.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "tests/testing.hpp"

namespace {

using CliRun = tessera::testing::CommandResult;

const std::string kExample = std::string(TESSERA_SOURCE_DIR) + "/examples/hgemm_naive.cu";

CliRun run(const std::string& args, int seconds = 60) {
  return tessera::testing::run_command("timeout " + std::to_string(seconds) + " " + std::string(TESSERA_BINARY) + " " +
                                       args + " 2>&1");
}

void expect_clear_error(const std::string& args, const std::string& needle) {
  const CliRun r = run(args);
  EXPECT_EQ(r.code, 2) << args << "\n" << r.out;
  EXPECT_EQ(r.out.rfind("error: ", 0), 0u) << args << "\n" << r.out;
  EXPECT_NE(r.out.find(needle), std::string::npos) << args << "\n" << r.out;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << "one line only:\n" << r.out;
}

TEST(CliMode, EveryCommandThatEvaluatesTakesBothSpellings) {
  for (const char* cmd : {"eval", "search", "serve", "bench harness", "bench suite", "tile eval", "tile tune"}) {
    const CliRun r = run(std::string(cmd) + " --help");
    EXPECT_EQ(r.code, 0) << cmd << "\n" << r.out;
    EXPECT_NE(r.out.find("--mode"), std::string::npos) << cmd << "\n" << r.out;
    EXPECT_NE(r.out.find("--compile-only"), std::string::npos) << cmd << "\n" << r.out;
  }
  for (const char* cmd : {"eval", "search", "serve"}) {
    const CliRun r = run(std::string(cmd) + " --help");
    EXPECT_NE(r.out.find("--sandbox-options"), std::string::npos) << cmd << "\n" << r.out;
  }
}

TEST(CliMode, ContradictionsAndUnknownNamesGetOneClearLine) {
  expect_clear_error("eval " + kExample + " --shape 64x64x64 --compile-only --mode full", "contradict");
  expect_clear_error("serve --port 0 --compile-only --mode full", "contradict");
  expect_clear_error("serve --port 0 --mode compile-only", "unknown evaluation mode 'compile-only'");
  expect_clear_error("serve --port 0 --compile-only --sandbox-options '{\"infra_retries\": 2}'",
                     "'infra_retries' is not set here");
  expect_clear_error("bench suite --tasks /nonexistent.json --mode auto", "never auto");
  expect_clear_error("eval " + kExample + " --shape 64x64x64 --sandbox-options '{\"infra_retry\": 1}'",
                     "unknown key 'infra_retry'");
  expect_clear_error("eval " + kExample + " --shape 64x64x64 --sandbox-options '{\"mode\": 1}'", "mode");
  expect_clear_error("eval " + kExample + " --shape 64x64x64 --compile-only --trials 0", "verify_trials");
}

TEST(CliMode, SandboxOptionsAndTheFlagBothSelectCompileOnly) {
  const CliRun options = run("eval " + kExample + " --shape 64x64x64 --sandbox-options '{\"mode\": \"compile_only\", "
                             "\"infra_retries\": 2, \"compile_timeout_s\": 90}' --json");
  EXPECT_EQ(options.code, 0) << options.out;
  EXPECT_NE(options.out.find("\"mode\": \"compile_only\""), std::string::npos) << options.out;
  const CliRun served = run("serve --port 0 --gpus 0 --compile-only", 15);  // stopped by the timeout once it listens
  EXPECT_NE(served.out.find("listening on"), std::string::npos) << served.out;
  EXPECT_NE(served.out.find("compile-only"), std::string::npos) << served.out;
}

}  // namespace
