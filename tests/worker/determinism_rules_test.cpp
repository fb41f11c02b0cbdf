// The determinism check's rules without a GPU (worker/verify.hpp): who may
// differ between two runs on the same inputs, and what a difference costs.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "worker/verify.hpp"

namespace tessera::worker {
namespace {

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(DeterminismRules, OnlyDeclaredCrossCtaReductionsMayDiffer) {
  EXPECT_EQ(determinism_required(nlohmann::json{{"split_k", 1}}, 0), Determinism::bit_exact);
  EXPECT_EQ(determinism_required(nlohmann::json(), 0), Determinism::bit_exact) << "a translation unit, no workspace";
  EXPECT_EQ(determinism_required(nlohmann::json{{"split_k", 4}}, 0), Determinism::within_tolerance) << "split-K";
  // Stream-K: the tile compiler declares split_k = its k-tiles, with a workspace.
  EXPECT_EQ(determinism_required(nlohmann::json{{"split_k", 64}, {"persistent_ctas_per_sm", 1}}, 1 << 20),
            Determinism::within_tolerance);
  EXPECT_EQ(determinism_required(nlohmann::json(), 4096), Determinism::within_tolerance)
      << "a translation unit that asks for a workspace";
  EXPECT_EQ(determinism_required(nlohmann::json{{"split_k", "4"}}, 0), Determinism::bit_exact)
      << "a malformed field declares nothing";
}

TrialStats repeat_with(long long mismatches, long long nonfinite, bool passed) {
  TrialStats t;
  t.distribution = "repeat";
  t.mismatches = mismatches;
  t.nonfinite = nonfinite;
  t.max_abs_err = nonfinite ? 0 : 0.5;
  t.passed = passed;
  return t;
}

TEST(DeterminismRules, IdenticalRunsAlwaysPass) {
  for (auto d : {Determinism::bit_exact, Determinism::within_tolerance, Determinism::off})
    EXPECT_EQ(determinism_failure(d, true, repeat_with(0, 0, true)), "") << to_string(d);
}

// An uninitialised shared-memory read: exact on zeros, NaN on the second pattern.
TEST(DeterminismRules, AnyBitDifferenceFailsAKernelThatDeclaresNothing) {
  const std::string why = determinism_failure(Determinism::bit_exact, false, repeat_with(4096, 4096, false));
  EXPECT_TRUE(has(why, "differs between two runs on the same inputs")) << why;
  EXPECT_TRUE(has(why, "4096 NaN or unwritten")) << why;
  // Even within tolerance: a race that only moves the last bit is still a race.
  EXPECT_NE(determinism_failure(Determinism::bit_exact, false, repeat_with(0, 0, true)), "");
}

TEST(DeterminismRules, DeclaredReductionsMayDifferOnlyWithinTolerance) {
  EXPECT_EQ(determinism_failure(Determinism::within_tolerance, false, repeat_with(0, 0, true)), "");
  const std::string why = determinism_failure(Determinism::within_tolerance, false, repeat_with(12, 0, false));
  EXPECT_TRUE(has(why, "second of two runs on the same inputs is outside tolerance")) << why;
  EXPECT_TRUE(has(why, "12 of its elements outside tolerance")) << why;
}

TEST(DeterminismRules, OffChecksNothing) {
  EXPECT_EQ(determinism_failure(Determinism::off, false, repeat_with(9, 9, false)), "");
}

TEST(DeterminismRules, TheTwoRunsUseDifferentPoisons) {
  EXPECT_NE(kSharedPatternFirst, kSharedPatternSecond);
  EXPECT_NE(kPoisonBits, kPoisonBitsSecond);
  // Both output poisons are NaNs no arithmetic produces (the canonical fp16 NaNs are 0x7E00 and 0xFE00).
  for (unsigned short bits : {kPoisonBits, kPoisonBitsSecond}) {
    EXPECT_EQ(bits & 0x7C00, 0x7C00) << std::hex << bits;
    EXPECT_NE(bits & 0x03FF, 0) << std::hex << bits;
    EXPECT_NE(bits & 0x7FFF, 0x7E00) << std::hex << bits;
  }
}

}  // namespace
}  // namespace tessera::worker
