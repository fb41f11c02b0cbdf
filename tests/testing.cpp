#include "tests/testing.hpp"

#include <sys/wait.h>

#include <array>
#include <cstdio>

#include <cuda_runtime_api.h>

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

}  // namespace tessera::testing
