// The torch-extension adapter: a kernel file written against torch::Tensor
// becomes a translation unit that compiles without torch and passes the
// translation-unit policy (examples/torch_ext_hgemm.cu, the project's own).
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <regex>

#include "harness/candidate_build.hpp"
#include "harness/compiler.hpp"
#include "core/error.hpp"
#include "core/fs.hpp"
#include "harness/detail/build_directives.hpp"
#include "harness/detail/compile_steps.hpp"
#include "harness/torch_ext.hpp"

namespace tessera {
namespace {

const std::string kExample = std::string(TESSERA_SOURCE_DIR) + "/examples/torch_ext_hgemm.cu";

TEST(TorchEntry, ParsesFunctionAndOperands) {
  const auto e = parse_torch_entry("  my_ns::hgemm ( a, b_col_major , c, m,n, k ) ");
  EXPECT_EQ(e.function, "my_ns::hgemm");
  EXPECT_EQ(e.args, (std::vector<std::string>{"a", "b_col_major", "c", "m", "n", "k"}));
}

TEST(TorchEntry, RejectsMalformedSpecsWithTheKnownNames) {
  for (const char* bad : {"hgemm", "hgemm(a, b", "(a, b, c)", "hgemm()", "hgemm(a,,c)", "1f(a)"})
    EXPECT_THROW(parse_torch_entry(bad), Error) << bad;
  try {
    parse_torch_entry("hgemm(a, weight, c)");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("unknown argument 'weight'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("b_col_major"), std::string::npos) << e.what();
  }
}

TEST(TorchAdapter, ReplacesTorchIncludesKeepsLinesAndAddsTheEntry) {
  const std::string src = "#include <torch/extension.h>\n#include <ATen/cuda/CUDAContext.h>\n#include <cuda_fp16.h>\n"
                          "void f(torch::Tensor a, torch::Tensor c) {}\n";
  const std::string out = adapt_torch_extension(src, "f.cu", parse_torch_entry("f(a, c)"));
  EXPECT_FALSE(includes_torch_headers(out));
  EXPECT_TRUE(includes_torch_headers(src));
  EXPECT_NE(out.find("#include <cuda_fp16.h>"), std::string::npos);
  EXPECT_NE(out.find("#line 1 \"f.cu\""), std::string::npos);
  EXPECT_NE(out.find("extern \"C\" int tessera_launch"), std::string::npos);
  EXPECT_NE(out.find("f(o_.a, o_.c)"), std::string::npos);
  EXPECT_EQ(detail::nvcc_directives(out), std::vector<std::string>{"--default-stream=per-thread"});
  // The user's file keeps its line numbers: line 4 of f.cu is still line 4 after #line 1.
  const auto at = out.find("#line 1 \"f.cu\"\n");
  const std::string rest = out.substr(at + std::string("#line 1 \"f.cu\"\n").size());
  EXPECT_EQ(rest.substr(0, rest.find("void f")).find("void"), std::string::npos);
  EXPECT_EQ(std::count(rest.begin(), rest.begin() + long(rest.find("void f")), '\n'), 3);
  EXPECT_EQ(detail::tu_source_policy(out), "");
}

TEST(TorchAdapter, PolicyStillSeesWhatTheFileIncludes) {
  const std::string src = "#include <torch/extension.h>\n#include <cublas_v2.h>\nvoid f(torch::Tensor a) {}\n";
  const std::string out = adapt_torch_extension(src, "f.cu", parse_torch_entry("f(a)"));
  EXPECT_NE(detail::tu_source_policy(out).find("cublas"), std::string::npos);
}

// The CI check of the example: it compiles with nvcc into a shared object
// that exports tessera_launch and passes the policy (a GPU run verifies it:
// docs/abi.md gives the command).
TEST(TorchAdapter, ExampleCompilesAndPassesPolicy) {
  BuildOptions b;
  b.torch_entry = "hgemm(a, b_nk, c)";
  const Candidate c = load_candidate_with(kExample, "auto", b);
  ASSERT_EQ(c.kind, CandidateKind::translation_unit);
  const auto cache = std::filesystem::temp_directory_path() / ("tessera-torch-ext-" + std::to_string(::getpid()));
  std::filesystem::remove_all(cache);
  Compiler comp({cache, 300, false, {}});
  const auto out = comp.compile({c.kind, c.source, "sm_90a", {}});
  ASSERT_EQ(out.status, Status::ok) << out.reason << "\n" << out.info.log;
  EXPECT_EQ(out.info.options, std::vector<std::string>{"--default-stream=per-thread"});
  EXPECT_TRUE(std::filesystem::exists(out.artifact));
}

}  // namespace
}  // namespace tessera
