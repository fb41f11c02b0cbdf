#include "tests/faults/leak_check.hpp"

#include <chrono>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <thread>

namespace tessera::testing {

namespace {

bool alive(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string p, comm, state;
  return static_cast<bool>(stat >> p >> comm >> state) && state != "Z";
}

std::string tmpdir_of(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/environ", std::ios::binary);
  const std::string env((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (std::size_t at = 0; at < env.size();) {
    const auto end = env.find('\0', at);
    const std::string entry = env.substr(at, end - at);
    if (entry.rfind("TMPDIR=", 0) == 0) return entry.substr(7);
    if (end == std::string::npos) break;
    at = end + 1;
  }
  return {};
}

}  // namespace

std::set<pid_t> tagged_processes(const std::filesystem::path& tag_dir) {
  std::set<pid_t> out;
  const std::string prefix = tag_dir.string() + "/";
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    const auto pid = static_cast<pid_t>(std::stol(name));
    if (tmpdir_of(pid).rfind(prefix, 0) == 0 && alive(pid)) out.insert(pid);
  }
  return out;
}

std::set<pid_t> wait_until_gone(const std::set<pid_t>& pids, double seconds) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  std::set<pid_t> left = pids;
  while (!left.empty() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    for (auto it = left.begin(); it != left.end();) it = alive(*it) ? std::next(it) : left.erase(it);
  }
  return left;
}

std::set<pid_t> gpu_processes(std::string* error) {
  std::set<pid_t> out;
  FILE* p = popen("nvidia-smi --query-compute-apps=pid --format=csv,noheader 2>/dev/null", "r");
  if (!p) {
    if (error) *error = "cannot run nvidia-smi";
    return out;
  }
  char line[64];
  while (fgets(line, sizeof line, p))
    if (const long pid = std::strtol(line, nullptr, 10); pid > 0) out.insert(static_cast<pid_t>(pid));
  if (pclose(p) != 0 && error) *error = "nvidia-smi failed (not installed?)";
  return out;
}

}  // namespace tessera::testing
