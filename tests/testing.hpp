#pragma once
// Shared test helpers.
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace tessera::testing {

// Empty when a usable CUDA GPU is present, else the reason there is none.
std::string gpu_unavailable_reason();

// Pids of this process's descendants whose command line contains `needle`
// (e.g. "__worker": the sandbox worker), from /proc.
std::vector<int> descendants_running(const std::string& needle);

}  // namespace tessera::testing

// Skips the current test, printing why, when there is no GPU.
#define TESSERA_REQUIRE_GPU()                                                   \
  do {                                                                          \
    const std::string reason_ = ::tessera::testing::gpu_unavailable_reason();   \
    if (!reason_.empty()) GTEST_SKIP() << "no GPU: " << reason_;                \
  } while (0)
