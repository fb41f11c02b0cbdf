// Spawning confined children: the environment they see (no secret), their
// session and limits, and the worker as WorkerClient starts it (a stand-in
// script plays the worker, so this runs without a GPU).
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

#include "confine/confine.hpp"
#include "core/error.hpp"
#include "harness/subprocess.hpp"
#include "harness/detail/worker_client.hpp"
#include "tests/harness/confine_helpers.hpp"

namespace tessera {
namespace {

using testing::leaked_secrets;
using testing::planted_secrets;
using testing::ScopedEnv;

// Runs `exe args` through spawn_confined with `env`; returns its stdout.
std::string spawn_and_read(const std::string& exe, const std::vector<std::string>& args, std::vector<std::string> env,
                           const std::filesystem::path& dir, const ChildLimits& limits) {
  int out[2];
  if (::pipe(out) != 0) return {};
  const pid_t pid = spawn_confined({exe, args, std::move(env), dir, limits, {{1, out[1]}}});
  ::close(out[1]);
  std::string text;
  char buf[4096];
  for (ssize_t n; (n = ::read(out[0], buf, sizeof buf)) > 0;) text.append(buf, static_cast<std::size_t>(n));
  ::close(out[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return text;
}

std::string line_value(const std::string& text, const std::string& prefix) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (line.rfind(prefix, 0) == 0) return line.substr(prefix.size());
  return "<missing>";
}

TEST(SandboxEnvironment, SecretsAreDroppedByNameEvenUnderAnAllowedPrefix) {
  for (const auto& [name, value] : planted_secrets()) EXPECT_TRUE(is_secret_name(name)) << name;
  for (const char* name : {"PATH", "HOME", "LD_LIBRARY_PATH", "CUDA_VISIBLE_DEVICES", "CUDA_MODULE_LOADING",
                           "TESSERA_CACHE_DIR", "LC_ALL", "NVCC_APPEND_FLAGS"})
    EXPECT_TRUE(is_inherited_name(name)) << name;
  for (const char* name : {"OPENAI_BASE_URL", "SSH_AUTH_SOCK", "PYTHONPATH", "DISPLAY", "TESSERA_LLM_CACHE_DIR"})
    EXPECT_FALSE(is_inherited_name(name)) << name;
  const auto env = sandbox_environment({"PATH=/bin", "OPENAI_API_KEY=sk-x", "CUDA_LICENSE_KEY=k", "TMPDIR=/tmp",
                                        "NOEQUALS", "=x", "CUDA_VISIBLE_DEVICES=0,1"},
                                       {{"CUDA_VISIBLE_DEVICES", "1"}, {"TMPDIR", "/scratch"}});
  EXPECT_EQ(env, (std::vector<std::string>{"PATH=/bin", "CUDA_VISIBLE_DEVICES=1", "TMPDIR=/scratch"}));
}

TEST(SandboxEnvironment, AnAttachedCudaToolKeepsItsVariablesButNoSecret) {
  const auto env = sandbox_environment({"CUDA_INJECTION64_PATH=/opt/tool/libinject.so", "TOOL_PORT=12350",
                                        "OPENAI_API_KEY=sk-x", "PATH=/bin"});
  EXPECT_EQ(env, (std::vector<std::string>{"CUDA_INJECTION64_PATH=/opt/tool/libinject.so", "TOOL_PORT=12350", "PATH=/bin"}));
}

TEST(SandboxEnvironment, OneVisibleDevicePerWorker) {
  EXPECT_EQ(visible_device(nullptr, 3), "3");
  EXPECT_EQ(visible_device("", 0), "0");
  EXPECT_EQ(visible_device("4,6", 1), "6");
  EXPECT_EQ(visible_device("GPU-aaaa,GPU-bbbb", 0), "GPU-aaaa");
  EXPECT_EQ(visible_device("4,6", 2), "-1") << "past the parent's list: no device rather than a wrong one";
}

// A child that prints its whole environment sees none of the planted secrets.
TEST(SandboxEnvironment, ConfinedChildrenAndCompilersSeeNoSecret) {
  ScopedEnv secrets(planted_secrets());
  ScratchDir scratch(std::filesystem::temp_directory_path(), "tessera-env-test-");
  const std::string worker_env = spawn_and_read("/usr/bin/env", {}, worker_environment(1, scratch.path()),
                                                scratch.path(), worker_limits());
  EXPECT_EQ(leaked_secrets(worker_env), "") << worker_env;
  EXPECT_NE(worker_env.find("\nPATH="), std::string::npos) << worker_env;
  EXPECT_EQ(line_value(worker_env, "TMPDIR="), scratch.path().string());
  EXPECT_EQ(line_value(worker_env, "CUDA_VISIBLE_DEVICES="), visible_device(std::getenv("CUDA_VISIBLE_DEVICES"), 1));
  const std::string runner_env = spawn_and_read("/usr/bin/env", {}, runner_environment(scratch.path()),
                                                scratch.path(), runner_limits());
  EXPECT_EQ(leaked_secrets(runner_env), "") << runner_env;
  EXPECT_EQ(line_value(runner_env, "HOME="), scratch.path().string());
  // Compile children (tessera __compile, nvcc) go through run_process.
  const auto compiler = run_process("/usr/bin/env", {}, "", 30, 1 << 20, scratch.path());
  EXPECT_EQ(leaked_secrets(compiler.output), "") << compiler.output;
  EXPECT_NE(compiler.output.find("PATH="), std::string::npos) << compiler.output;
}

TEST(SpawnConfined, ChildLeadsItsOwnSessionWithLimitsAndNoCoreFiles) {
  ScratchDir scratch(std::filesystem::temp_directory_path(), "tessera-spawn-test-");
  const std::string out = spawn_and_read(
      "/bin/sh", {"-c", "echo IDS $$ $(cut -d' ' -f6 /proc/$$/stat); echo CORE $(ulimit -c); echo FILES $(ulimit -n); pwd"},
      sandbox_environment(current_environment()), scratch.path(), runner_limits());
  std::istringstream ids(line_value(out, "IDS "));
  std::string pid, sid;
  ids >> pid >> sid;
  EXPECT_EQ(pid, sid) << out;
  EXPECT_EQ(line_value(out, "CORE "), "0") << out;
  EXPECT_EQ(line_value(out, "FILES "), std::to_string(kRunnerMaxOpenFiles)) << out;
  EXPECT_NE(out.find(scratch.path().string()), std::string::npos) << "starts in its scratch directory\n" << out;
  EXPECT_THROW(spawn_confined({"/nonexistent/program", {}, {}, scratch.path(), runner_limits(), {}}), Error);
}

// A process is gone when it no longer exists or is a zombie nobody reaped yet.
bool gone(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string p, comm, state;
  return !(stat >> p >> comm >> state) || state == "Z";
}

// The worker as the harness starts it: a script stands in for `tessera
// __worker`, reports what it sees on stderr (the worker log) and leaves a
// child behind; killing the worker takes that child too.
TEST(WorkerSpawn, StartsInItsOwnSessionAndScratchWithOneGpuAndNoSecrets) {
  ScopedEnv env(planted_secrets());
  ScopedEnv gpus("CUDA_VISIBLE_DEVICES", "5,7");
  ScratchDir dir(std::filesystem::temp_directory_path(), "tessera-worker-test-");
  const auto script = dir.path() / "fake_worker.sh";
  std::ofstream(script) << "#!/bin/sh\n"
                           "echo \"ARGS $*\" >&2\n"
                           "echo \"CWD $(pwd)\" >&2\n"
                           "echo \"IDS $$ $(cut -d' ' -f6 /proc/$$/stat)\" >&2\n"
                           "env | sed 's/^/ENV /' >&2\n"
                           "sleep 300 &\n"
                           "echo \"LEFT $!\" >&2\n"
                           "echo '{\"event\":\"ready\"}'\n"
                           "while read line; do :; done\n";
  std::filesystem::permissions(script, std::filesystem::perms::owner_all);
  std::filesystem::path scratch;
  pid_t left = 0;
  {
    detail::WorkerClient w(script, 1, dir.path() / "worker.log", false, 16);
    ASSERT_EQ(w.start(10).kind, detail::WorkerReply::Kind::answer) << w.log_tail(4096);
    std::string log;
    for (int i = 0; i < 200 && log.find("LEFT ") == std::string::npos; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      log = w.log_tail(1 << 16);
    }
    EXPECT_NE(line_value(log, "ARGS ").find("__worker --device 0 "), std::string::npos) << log;
    EXPECT_EQ(line_value(log, "ENV CUDA_VISIBLE_DEVICES="), "7") << "device 1 of 5,7";
    EXPECT_EQ(leaked_secrets(log), "") << log;
    scratch = line_value(log, "CWD ");
    EXPECT_EQ(scratch.filename().string().rfind("tessera-worker-", 0), 0u) << scratch;
    EXPECT_EQ(line_value(log, "ENV TMPDIR="), scratch.string());
    std::istringstream ids(line_value(log, "IDS "));
    std::string pid, sid;
    ids >> pid >> sid;
    EXPECT_EQ(pid, sid) << "the worker leads its own session";
    EXPECT_EQ(pid, std::to_string(w.pid()));
    ASSERT_NE(log.find("LEFT "), std::string::npos) << log;
    left = static_cast<pid_t>(std::stol(line_value(log, "LEFT ")));
    w.kill();
  }
  for (int i = 0; i < 500 && !gone(left); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_TRUE(gone(left)) << "what the worker started dies with it";
  EXPECT_FALSE(std::filesystem::exists(scratch)) << "the scratch directory goes with the worker";
}

}  // namespace
}  // namespace tessera
