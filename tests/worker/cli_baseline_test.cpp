// `tessera baseline` at the process boundary: bad input and a missing GPU are
// one clear line and exit code 2, never a crash. Runs the built binary.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <string>

#include "tests/testing.hpp"

namespace {

struct Outcome {
  int code = -1;
  std::string output;
};

Outcome run(const std::string& args) {
  Outcome o;
  const std::string cmd = std::string(TESSERA_BINARY) + " baseline " + args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return o;
  std::array<char, 512> buf{};
  while (fgets(buf.data(), int(buf.size()), p)) o.output += buf.data();
  const int status = pclose(p);
  o.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return o;
}

class BaselineCli : public ::testing::Test {
protected:
  void SetUp() override {
    if (!std::filesystem::exists(TESSERA_BINARY)) GTEST_SKIP() << "tessera binary not built: " << TESSERA_BINARY;
  }
};

TEST_F(BaselineCli, BadShapeIsOneLineAndExit2) {
  const Outcome o = run("--shape 12x");
  EXPECT_EQ(o.code, 2) << o.output;
  EXPECT_NE(o.output.find("bad shape '12x'"), std::string::npos) << o.output;
}

TEST_F(BaselineCli, BadLayoutAndAlgoCountAreRejected) {
  EXPECT_EQ(run("--shape 64x64x64 --layout TT").code, 2);
  EXPECT_EQ(run("--shape 64x64x64 --max-algos 0").code, 2);
}

TEST_F(BaselineCli, NoGpuIsAClearError) {
  if (tessera::testing::gpu_unavailable_reason().empty()) GTEST_SKIP() << "a GPU is present";
  const Outcome o = run("--shape 64x64x64");
  EXPECT_EQ(o.code, 2) << o.output;
  EXPECT_EQ(o.output.rfind("error: no CUDA GPU: ", 0), 0u) << o.output;
}

}  // namespace
