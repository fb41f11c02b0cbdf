#include "tests/harness/confine_helpers.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

namespace tessera::testing {

namespace {

std::string read_all(int fd) {
  std::string s;
  char buf[4096];
  for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    s.append(buf, static_cast<std::size_t>(n));
  }
  return s;
}

}  // namespace

ConfinedRun run_confined(const ConfinePolicy& policy, const std::function<int()>& act) {
  int report[2], err[2];
  if (::pipe2(report, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0) std::abort();
  const ChildLimits limits = runner_limits();
  const std::uint64_t nproc = process_limit(limits);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(err[1], STDERR_FILENO);
    int rc = 0;
    try {
      enter_confined_child({limits.max_file_bytes, limits.max_open_files, limits.process_headroom, false}, nproc);
      const std::string line = nlohmann::json(confine_self(policy)).dump() + "\n";
      (void)!::write(report[1], line.data(), line.size());
      ::close(report[1]);
      rc = act();
    } catch (const std::exception& e) {
      (void)!::write(STDERR_FILENO, e.what(), std::strlen(e.what()));
      rc = 125;
    }
    ::_exit(rc);
  }
  ::close(report[1]);
  ::close(err[1]);
  ConfinedRun r;
  const std::string line = read_all(report[0]);
  r.err = read_all(err[0]);
  ::close(report[0]);
  ::close(err[0]);
  ::waitpid(pid, &r.status, 0);
  if (!line.empty()) r.report = nlohmann::json::parse(line).get<ProtectionReport>();
  return r;
}

const std::map<std::string, std::string>& planted_secrets() {
  static const std::map<std::string, std::string> s = {
      {"OPENAI_API_KEY", "sk-planted-openai"},     {"ANTHROPIC_API_KEY", "sk-ant-planted"},
      {"AWS_ACCESS_KEY_ID", "AKIAPLANTED"},        {"AWS_SECRET_ACCESS_KEY", "planted-aws-secret"},
      {"AWS_SESSION_TOKEN", "planted-aws-session"}, {"HF_TOKEN", "hf_planted"},
      {"GITHUB_TOKEN", "ghp_planted"},             {"NVIDIA_API_KEY", "nvapi-planted"},
      {"CUDA_LICENSE_KEY", "planted-cuda-key"},    {"MY_SERVICE_SECRET", "planted-service-secret"},
      {"DATABASE_PASSWORD", "planted-db-password"}, {"TESSERA_LLM_TOKEN", "planted-tessera-token"}};
  return s;
}

std::string leaked_secrets(const std::string& env_text) {
  std::string leaked;
  for (const auto& [name, value] : planted_secrets())
    if (env_text.find(name + "=") != std::string::npos || env_text.find(value) != std::string::npos)
      leaked += name + " ";
  return leaked;
}

}  // namespace tessera::testing
