// Parsing real-looking model replies.
#include <gtest/gtest.h>

#include "agent/parse.hpp"

namespace tessera::agent {
namespace {

const std::string kParent = R"(#include "tessera_abi.cuh"

extern "C" __global__ void tessera_hgemm(const __grid_constant__ TesseraGemmParams p) {
    const int row = blockIdx.y * 16 + threadIdx.y;
    const int col = blockIdx.x * 16 + threadIdx.x;
    float acc = 0.f;
    for (int k = 0; k < p.K; ++k) {
        acc += __half2float(p.A[row * p.lda + k]) * __half2float(p.B[col * p.ldb + k]);
    }
    p.C[row * p.ldc + col] = __float2half(acc);
}
)";

TEST(Parse, PicksTheKernelAmongSeveralCodeBlocks) {
  const std::string reply = R"(The current kernel is latency-bound. First, compile with:

```bash
nvcc -arch=sm_90a -O3 kernel.cu
```

A helper you might reuse:

```cpp
__device__ inline int ceil_div(int a, int b) { return (a + b - 1) / b; }
```

Here is the full kernel:

```cuda
#include "tessera_abi.cuh"
extern "C" __global__ void tessera_hgemm(const __grid_constant__ TesseraGemmParams p) { /* tiled */ }
extern "C" __device__ const TesseraLaunchContract tessera_contract = {1, 128, 64, 64, 1, 0, 0, 1, 1, 0, 0, 0};
```

And the expected output format:
```json
{"tflops": 600}
```
)";
  const auto parsed = parse_kernel_reply(reply, std::nullopt);
  ASSERT_TRUE(parsed.ok) << parsed.error;
  EXPECT_EQ(parsed.kind, "full_source");
  EXPECT_NE(parsed.source.find("tessera_contract"), std::string::npos);
  EXPECT_EQ(parsed.source.find("ceil_div"), std::string::npos);
  EXPECT_EQ(extract_code_blocks(reply).size(), 4u);
}

TEST(Parse, FallsBackToTheLargestCudaBlockWithoutEntryPoints) {
  const std::string reply = "```cpp\nint a;\n```\n\n```cuda\n__global__ void k() { int much_longer_body; }\n```\n```text\nlong long long long long long long text\n```\n";
  const auto block = select_kernel_block(extract_code_blocks(reply));
  ASSERT_TRUE(block);
  EXPECT_EQ(block->lang, "cuda");
}

TEST(Parse, TildeFencesAndInfoStringsWork) {
  const auto blocks = extract_code_blocks("~~~ CUDA title=\"k.cu\"\nx\n~~~\n````cpp\n```\ninner\n```\n````\n");
  ASSERT_EQ(blocks.size(), 2u);
  EXPECT_EQ(blocks[0].lang, "cuda");
  EXPECT_EQ(blocks[1].body, "```\ninner\n```\n");
}

TEST(Parse, NoCodeAtAllIsAClearError) {
  const auto parsed = parse_kernel_reply("I think the kernel is already optimal; no changes needed.", std::nullopt);
  EXPECT_FALSE(parsed.ok);
  EXPECT_NE(parsed.error.find("no fenced code block"), std::string::npos) << parsed.error;
}

TEST(Parse, CutOffCodeBlockIsReportedAsSuch) {
  const auto parsed = parse_kernel_reply("Here:\n```cuda\n#include \"tessera_abi.cuh\"\nextern \"C\" __global__ void tessera_hgemm(", std::nullopt);
  EXPECT_FALSE(parsed.ok);
  EXPECT_NE(parsed.error.find("unclosed code block"), std::string::npos) << parsed.error;
}

TEST(Parse, ThinkTagsAreIgnored) {
  const auto parsed = parse_kernel_reply("<think>maybe ```cuda\nbogus\n``` first</think>\n```cuda\nextern \"C\" __global__ void tessera_hgemm() {}\n```", std::nullopt);
  ASSERT_TRUE(parsed.ok) << parsed.error;
  EXPECT_EQ(parsed.source.find("bogus"), std::string::npos);
}

TEST(Diff, ExactSearchReplaceApplies) {
  const std::string reply = R"(Unroll the K loop:

```cuda
<<<<<<< SEARCH
    for (int k = 0; k < p.K; ++k) {
=======
    #pragma unroll 8
    for (int k = 0; k < p.K; ++k) {
>>>>>>> REPLACE
```
)";
  const auto parsed = parse_kernel_reply(reply, kParent);
  ASSERT_TRUE(parsed.ok) << parsed.error;
  EXPECT_EQ(parsed.kind, "diff");
  EXPECT_NE(parsed.source.find("    #pragma unroll 8\n    for (int k"), std::string::npos);
  EXPECT_NE(parsed.action.find("<<<<<<< SEARCH"), std::string::npos);
}

TEST(Diff, WhitespaceDriftIsTolerated) {
  // The model dropped the indentation, used tabs-free 2-space indents and added trailing spaces.
  const std::string reply =
      "<<<<<<< SEARCH\n"
      "  float acc = 0.f;   \n"
      "  for (int k = 0; k < p.K; ++k) {\n"
      "=======\n"
      "  float acc = 0.f;\n"
      "  const int K = p.K;\n"
      "  for (int k = 0; k < K; ++k) {\n"
      ">>>>>>> REPLACE\n";
  const auto blocks = extract_diff_blocks(reply);
  ASSERT_EQ(blocks.size(), 1u);
  const auto applied = apply_diff(kParent, blocks);
  ASSERT_TRUE(applied.ok) << applied.error;
  EXPECT_EQ(applied.fuzzy_matches, 1);
  // Re-indented to the parent's four spaces.
  EXPECT_NE(applied.source.find("\n    const int K = p.K;\n    for (int k = 0; k < K; ++k) {\n"), std::string::npos) << applied.source;
  EXPECT_EQ(applied.source.find("float acc = 0.f;   "), std::string::npos);
}

TEST(Diff, TrailingWhitespaceOnlyDriftKeepsReplacementAsWritten) {
  const std::string parent = "a();  \nb();\nc();\n";
  const auto applied = apply_diff(parent, {{"a();\nb();\n", "x();\n"}});
  ASSERT_TRUE(applied.ok) << applied.error;
  EXPECT_EQ(applied.source, "x();\nc();\n");
}

TEST(Diff, SeveralBlocksApplyInOrder) {
  const std::string reply =
      "<<<<<<< SEARCH\n    float acc = 0.f;\n=======\n    float acc = 0.0f;\n>>>>>>> REPLACE\n"
      "and\n"
      "<<<<<<< SEARCH\n    p.C[row * p.ldc + col] = __float2half(acc);\n=======\n    if (row < p.M && col < p.N) p.C[row * p.ldc + col] = __float2half(acc);\n>>>>>>> REPLACE\n";
  const auto parsed = parse_kernel_reply(reply, kParent);
  ASSERT_TRUE(parsed.ok) << parsed.error;
  EXPECT_NE(parsed.source.find("float acc = 0.0f;"), std::string::npos);
  EXPECT_NE(parsed.source.find("if (row < p.M && col < p.N)"), std::string::npos);
}

TEST(Diff, NonMatchingSearchIsAClearError) {
  const std::string reply = "<<<<<<< SEARCH\n    int tile = 128;\n=======\n    int tile = 256;\n>>>>>>> REPLACE\n";
  const auto parsed = parse_kernel_reply(reply, kParent);
  EXPECT_FALSE(parsed.ok);
  EXPECT_NE(parsed.error.find("SEARCH block 1 of 1 does not match"), std::string::npos) << parsed.error;
  EXPECT_NE(parsed.error.find("int tile = 128;"), std::string::npos) << parsed.error;
}

TEST(Diff, ExactMatchMustStartALine) {
  const auto applied = apply_diff("int max = 1;\nx = 1;\n", {{"x = 1;\n", "x = 2;\n"}});
  ASSERT_TRUE(applied.ok);
  EXPECT_EQ(applied.source, "int max = 1;\nx = 2;\n");
}

TEST(Diff, DiffWithoutParentAndUnterminatedBlocksAreErrors) {
  const std::string diff = "<<<<<<< SEARCH\na\n=======\nb\n>>>>>>> REPLACE\n";
  EXPECT_NE(parse_kernel_reply(diff, std::nullopt).error.find("no parent"), std::string::npos);
  const auto cut = parse_kernel_reply("<<<<<<< SEARCH\na\n=======\nb\n", kParent);
  EXPECT_FALSE(cut.ok);
  EXPECT_NE(cut.error.find("unterminated"), std::string::npos) << cut.error;
  EXPECT_FALSE(apply_diff(kParent, {{"  \n", "x\n"}}).ok);  // empty SEARCH
}

TEST(Json, ExtractsTileConfigMutations) {
  auto j = extract_json_object("Try bigger tiles:\n```json\n{\"tile_m\": 128, \"tile_n\": 256, \"stages\": 4}\n```\n");
  ASSERT_TRUE(j);
  EXPECT_EQ((*j)["tile_n"], 256);
  j = extract_json_object("I suggest {\"stages\": 3, \"note\": \"a } in a string\"} as the change.");
  ASSERT_TRUE(j);
  EXPECT_EQ((*j)["stages"], 3);
  EXPECT_FALSE(extract_json_object("```json\n[1, 2]\n```\nno object {here"));
}

}  // namespace
}  // namespace tessera::agent
