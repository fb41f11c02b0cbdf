#include <gtest/gtest.h>

#include "bench/kernels.hpp"
#include "core/error.hpp"
#include "core/fs.hpp"
#include "tests/bench/synthetic.hpp"

namespace tessera::bench {
namespace {

namespace fs = std::filesystem;

TEST(KernelSource, ParsesEveryKind) {
  EXPECT_EQ(parse_kernel_source("none").kind, KernelSourceKind::none);
  EXPECT_EQ(parse_kernel_source("").kind, KernelSourceKind::none);
  const auto tile = parse_kernel_source("tile:24");
  EXPECT_EQ(tile.kind, KernelSourceKind::tile);
  EXPECT_EQ(tile.budget, 24);
  EXPECT_EQ(tile.spec(), "tile:24");
  const std::string example = std::string(TESSERA_SOURCE_DIR) + "/examples/hgemm_tu.cu";
  EXPECT_EQ(parse_kernel_source("file:" + example).kind, KernelSourceKind::file);
  EXPECT_EQ(parse_kernel_source(example).kind, KernelSourceKind::file);
  EXPECT_EQ(parse_kernel_source(std::string(TESSERA_SOURCE_DIR) + "/examples").kind, KernelSourceKind::dir);
  const auto run = testing::fresh_dir("kernels-run");
  fs::create_directories(run / "best");
  EXPECT_EQ(parse_kernel_source(run.string()).kind, KernelSourceKind::run);
  EXPECT_EQ(parse_kernel_source("run:" + run.string()).spec(), "run:" + run.string());
}

TEST(KernelSource, BadSpecsNameTheProblem) {
  auto message = [](const std::string& spec) {
    try {
      parse_kernel_source(spec);
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), Error::Kind::bad_input);
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message("cutlass:foo").find("unknown kernel source 'cutlass'"), std::string::npos);
  EXPECT_NE(message("tile:0").find("positive integer"), std::string::npos);
  EXPECT_NE(message("tile:many").find("positive integer"), std::string::npos);
  EXPECT_NE(message("dir:/nonexistent/kernels").find("no such file or folder"), std::string::npos);
  EXPECT_NE(message("file:").find("no path"), std::string::npos);
  EXPECT_NE(message("run:" + std::string(TESSERA_SOURCE_DIR) + "/examples").find("no best/"), std::string::npos);
  EXPECT_NE(message("file:" + std::string(TESSERA_SOURCE_DIR) + "/examples").find("not a kernel file"), std::string::npos);
}

TEST(KernelSource, FindsAShapesFileByAnyOfItsNames) {
  const auto dir = testing::fresh_dir("kernels-dir");
  fs::create_directories(dir);
  atomic_write_file(dir / "64_128_256.cu", "x");
  atomic_write_file(dir / "128x128x128.cu", "x");
  atomic_write_file(dir / "hgemm_256x256x256_TN_none.cu", "x");
  const auto src = parse_kernel_source("dir:" + dir.string());
  EXPECT_EQ(kernel_file_for(src, task_from_shape("64x128x256"))->filename(), "64_128_256.cu");
  EXPECT_EQ(kernel_file_for(src, task_from_shape("128x128x128"))->filename(), "128x128x128.cu");
  EXPECT_EQ(kernel_file_for(src, task_from_shape("256x256x256"))->filename(), "hgemm_256x256x256_TN_none.cu");
  EXPECT_FALSE(kernel_file_for(src, task_from_shape("512x512x512")));
  EXPECT_NO_THROW(check_covers_some(src, {task_from_shape("512x512x512"), task_from_shape("64x128x256")}));
  EXPECT_THROW(check_covers_some(src, {task_from_shape("512x512x512")}), Error);
}

}  // namespace
}  // namespace tessera::bench
