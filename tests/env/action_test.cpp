// parse_action: every action form, what the action space refuses, and that
// nothing a policy writes escapes as an exception.
#include <gtest/gtest.h>

#include "env/env.hpp"
#include "tests/env/fake_evaluator.hpp"

namespace tessera::env {
namespace {

using testing::fake_kernel;

Task task1024() { return task_from_shape("1024x1024x1024"); }

ParsedAction parse(const std::string& text, std::optional<std::string> previous = std::nullopt, ActionSpace a = {}) {
  return parse_action(text, previous, task1024(), a);
}

const std::string kTuSource =
    "#include \"tessera_abi.cuh\"\n"
    "extern \"C\" int tessera_launch(const TesseraGemmParams* p, void* stream) { return 0; }\n";

TEST(ParseAction, FencedKernelAmongProse) {
  const auto k = fake_kernel("A");
  const auto p = parse("The tiles are too small, so:\n```cuda\n" + k + "```\nThat should help.");
  ASSERT_TRUE(p.ok) << p.error;
  EXPECT_EQ(p.kind, "device_only");
  EXPECT_EQ(p.candidate.kind, CandidateKind::device_only);
  EXPECT_EQ(p.candidate.source, k);
}

TEST(ParseAction, BareSourceAndReasoningBeforeIt) {
  const auto k = fake_kernel("B");
  auto p = parse(k);
  ASSERT_TRUE(p.ok) << p.error;
  EXPECT_EQ(p.candidate.source, k);
  // A think block that mentions a JSON object must not turn the reply into a tile config.
  p = parse("<think>maybe {\"bm\": 64}? no.</think>\n" + k);
  ASSERT_TRUE(p.ok) << p.error;
  EXPECT_EQ(p.kind, "device_only");
}

TEST(ParseAction, LongReasoningIsSkippedAndACutOffOneIsAFormatFailure) {
  // std::regex over a think block of this size would overflow the stack.
  const std::string reasoning(200000, 'r');
  const auto k = fake_kernel("T");
  auto p = parse("<think>" + reasoning + "</think>\n```cuda\n" + k + "```");
  ASSERT_TRUE(p.ok) << p.error;
  EXPECT_EQ(p.candidate.source, k);
  p = parse("<think>" + reasoning + "\n```cuda\n" + k + "```");
  EXPECT_FALSE(p.ok);
  EXPECT_NE(p.error.find("inside a <think> block"), std::string::npos) << p.error;
}

TEST(ParseAction, DiffAppliesToThePreviousKernel) {
  const auto prev = fake_kernel("C");
  const auto p = parse("<<<<<<< SEARCH\n  float acc = 0.0f;\n=======\n  float acc = 1.0f;\n>>>>>>> REPLACE\n", prev);
  ASSERT_TRUE(p.ok) << p.error;
  EXPECT_EQ(p.kind, "diff");
  EXPECT_NE(p.candidate.source.find("float acc = 1.0f;"), std::string::npos);
  EXPECT_EQ(p.candidate.source.find("float acc = 0.0f;"), std::string::npos);
  EXPECT_EQ(p.fuzzy_matches, 0);
  // Indentation differs: matched after normalisation, and counted.
  const auto fuzzy = parse("<<<<<<< SEARCH\nfloat acc = 0.0f;\n=======\nfloat acc = 2.0f;\n>>>>>>> REPLACE\n", prev);
  ASSERT_TRUE(fuzzy.ok) << fuzzy.error;
  EXPECT_EQ(fuzzy.fuzzy_matches, 1);
  EXPECT_NE(fuzzy.candidate.source.find("  float acc = 2.0f;"), std::string::npos);
}

TEST(ParseAction, DiffFailuresSayWhy) {
  const std::string diff = "<<<<<<< SEARCH\n  not in the kernel\n=======\n  x\n>>>>>>> REPLACE\n";
  auto p = parse(diff);
  EXPECT_FALSE(p.ok);
  EXPECT_EQ(p.kind, "diff");
  EXPECT_NE(p.error.find("send a complete kernel first"), std::string::npos) << p.error;
  p = parse(diff, fake_kernel("D"));
  EXPECT_FALSE(p.ok);
  EXPECT_NE(p.error.find("does not match"), std::string::npos) << p.error;
  p = parse("<<<<<<< SEARCH\n  float acc = 0.0f;\n=======\n", fake_kernel("D"));
  EXPECT_FALSE(p.ok);
  EXPECT_NE(p.error.find("unterminated"), std::string::npos) << p.error;
}

TEST(ParseAction, TileConfigAsJsonBlockBareObjectOrProposerForm) {
  for (const std::string& text : {std::string("```json\n{\"bm\": 64, \"bn\": 128, \"stages\": 4}\n```"),
                                 std::string("Try this: {\"bm\": 64, \"bn\": 128, \"stages\": 4}"),
                                 std::string("{\"tile_config\": {\"bm\": 64, \"bn\": 128, \"stages\": 4}}")}) {
    const auto p = parse(text);
    ASSERT_TRUE(p.ok) << text << ": " << p.error;
    EXPECT_EQ(p.kind, "tile_config");
    EXPECT_EQ(p.tile_config.at("bm"), 64);
    EXPECT_EQ(p.tile_config.at("stages"), 4);
    EXPECT_EQ(p.candidate.meta.at("tile_config"), p.tile_config);
    EXPECT_NE(p.candidate.source.find("tessera_hgemm"), std::string::npos);  // the emitter's kernel
    EXPECT_FALSE(p.candidate.name.empty());
  }
}

TEST(ParseAction, BadTileConfigsAreFormatFailuresWithTheReason) {
  auto p = parse("```json\n{\"bogus_knob\": 3}\n```");
  EXPECT_FALSE(p.ok);
  EXPECT_EQ(p.kind, "tile_config");
  EXPECT_NE(p.error.find("bogus_knob"), std::string::npos) << p.error;
  p = parse("```json\n{\"bm\": 64, \"warps_m\": 64}\n```");
  EXPECT_FALSE(p.ok);
  EXPECT_NE(p.error.find("cannot run this task"), std::string::npos) << p.error;
}

TEST(ParseAction, KernelBlockWinsOverAJsonBlock) {
  const auto k = fake_kernel("E");
  const auto p = parse("```json\n{\"bm\": 64}\n```\n```cuda\n" + k + "```\n");
  ASSERT_TRUE(p.ok) << p.error;
  EXPECT_EQ(p.kind, "device_only");
}

TEST(ParseAction, TheActionSpaceDecides) {
  ActionSpace only_tiles;
  only_tiles.device_only = only_tiles.diff = false;
  auto p = parse(fake_kernel("F"), std::nullopt, only_tiles);
  EXPECT_FALSE(p.ok);
  EXPECT_NE(p.error.find("not accepted"), std::string::npos) << p.error;
  p = parse("<<<<<<< SEARCH\n  float acc = 0.0f;\n=======\n  float acc = 1.0f;\n>>>>>>> REPLACE\n", fake_kernel("F"), only_tiles);
  EXPECT_FALSE(p.ok);
  EXPECT_EQ(p.kind, "diff");
  EXPECT_TRUE(parse("{\"bm\": 64}", std::nullopt, only_tiles).ok);

  ActionSpace no_tiles;
  no_tiles.tile_config = false;
  p = parse("{\"bm\": 64}", std::nullopt, no_tiles);
  EXPECT_FALSE(p.ok);
  EXPECT_EQ(p.kind, "tile_config");

  // Full translation units are off by default and accepted only when allowed.
  p = parse("```cuda\n" + kTuSource + "```");
  EXPECT_FALSE(p.ok);
  EXPECT_EQ(p.kind, "translation_unit");
  EXPECT_NE(p.error.find("not accepted"), std::string::npos) << p.error;
  ActionSpace trusted;
  trusted.translation_unit = true;
  p = parse("```cuda\n" + kTuSource + "```", std::nullopt, trusted);
  ASSERT_TRUE(p.ok) << p.error;
  EXPECT_EQ(p.candidate.kind, CandidateKind::translation_unit);
}

TEST(ParseAction, NothingUsableIsAFormatFailureThatNamesTheForms) {
  for (const std::string& text : {std::string(""), std::string("I think we should use bigger tiles."),
                                 std::string("```cuda\n__global__ void k() {}\n```"),
                                 std::string("```cuda\nextern \"C\" __global__ void tessera_hgemm(\n"),
                                 std::string(200000, '{'), std::string(200000, ' '),
                                 "```cuda\n" + std::string(200000, ' ') + "tessera_hgemm(\n```\n",
                                 "```cuda\ntessera_launch" + std::string(100000, '\n') + "(\n```\n",
                                 std::string(200000, '<') + " SEARCH\n",
                                 std::string(kMaxActionChars + 1, 'x')}) {
    const auto p = parse(text);
    EXPECT_FALSE(p.ok) << text.substr(0, 80);
    EXPECT_FALSE(p.error.empty());
  }
  EXPECT_NE(parse("hello").error.find("tile config"), std::string::npos);
  EXPECT_NE(parse(std::string(kMaxActionChars + 1, 'x')).error.find("the limit is"), std::string::npos);
  EXPECT_NE(parse(std::string(kMaxBlankRun + 1, ' ') + fake_kernel("U")).error.find("blank characters"), std::string::npos);
  EXPECT_TRUE(parse(std::string(kMaxBlankRun, ' ') + fake_kernel("U")).ok);
}

}  // namespace
}  // namespace tessera::env
