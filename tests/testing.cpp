#include "tests/testing.hpp"

#include <sys/wait.h>

#include <array>
#include <cstdlib>
#include <cstdio>

#include <cuda_runtime_api.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "harness/detail/machine_state.hpp"

namespace tessera::testing {

void mark_timed_ok(EvalResult& r, double us, int trials) {
  r.status = Status::ok;
  r.verify.status = "passed";
  r.verify.trials = r.verify.trials_passed = trials;
  r.cold.status = "measured";
  r.cold.method = "fake";
  r.cold.samples = 50;
  r.cold.median_us = r.cold.p10_us = r.cold.p90_us = us;
  r.cold.converged = true;
}


std::string gpu_unavailable_reason() {
  // Cached: the answer cannot change within one test process.
  static const std::string reason = [] {
    int n = 0;
    cudaError_t err = cudaGetDeviceCount(&n);
    if (err != cudaSuccess) return std::string(cudaGetErrorString(err));
    if (n == 0) return std::string("cudaGetDeviceCount reports 0 devices");
    return std::string();
  }();
  return reason;
}

namespace {

std::string command_line(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/cmdline", std::ios::binary);
  std::string s((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (auto& c : s)
    if (c == '\0') c = ' ';
  return s;
}

}  // namespace

std::vector<int> descendants_running(const std::string& needle) {
  std::vector<int> out;
  const int self = static_cast<int>(::getpid());
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = e.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    const int pid = std::stoi(name);
    bool ours = false;
    for (int p = detail::parent_of(pid), hops = 0; p > 1 && hops < 64; p = detail::parent_of(p), ++hops)
      if (p == self) {
        ours = true;
        break;
      }
    if (ours && command_line(pid).find(needle) != std::string::npos) out.push_back(pid);
  }
  return out;
}

CommandResult run_command(const std::string& shell_command) {
  CommandResult r;
  FILE* p = popen(shell_command.c_str(), "r");
  if (!p) return r;
  std::array<char, 4096> buf{};
  while (std::size_t n = fread(buf.data(), 1, buf.size(), p)) r.out.append(buf.data(), n);
  const int status = pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

std::string contents_and_close(std::FILE* f) {
  std::rewind(f);
  std::string text(4096, '\0');
  text.resize(std::fread(text.data(), 1, text.size(), f));
  std::fclose(f);
  return text;
}

void ScopedEnv::save(const std::string& name) {
  if (saved_.count(name)) return;
  const char* old = std::getenv(name.c_str());
  saved_[name] = old ? std::optional<std::string>(old) : std::nullopt;
}

ScopedEnv::ScopedEnv(const std::map<std::string, std::string>& vars) {
  for (const auto& [name, value] : vars) {
    save(name);
    ::setenv(name.c_str(), value.c_str(), 1);
  }
}

ScopedEnv::ScopedEnv(const std::string& name, const char* value) {
  save(name);
  if (value) ::setenv(name.c_str(), value, 1);
  else ::unsetenv(name.c_str());
}

ScopedEnv::~ScopedEnv() {
  for (const auto& [name, old] : saved_) {
    if (old) ::setenv(name.c_str(), old->c_str(), 1);
    else ::unsetenv(name.c_str());
  }
}

}  // namespace tessera::testing
