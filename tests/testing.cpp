#include "tests/testing.hpp"

#include <cuda_runtime_api.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace tessera::testing {

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

int parent_of(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(in, line)) return 0;
  const auto close = line.rfind(')');
  if (close == std::string::npos) return 0;
  std::istringstream rest(line.substr(close + 1));
  std::string state;
  int ppid = 0;
  rest >> state >> ppid;
  return ppid;
}

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
    for (int p = parent_of(pid), hops = 0; p > 1 && hops < 64; p = parent_of(p), ++hops)
      if (p == self) {
        ours = true;
        break;
      }
    if (ours && command_line(pid).find(needle) != std::string::npos) out.push_back(pid);
  }
  return out;
}

}  // namespace tessera::testing
