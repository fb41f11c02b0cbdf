// GELU's math pasted into every fused-GELU kernel (tile/detail/gelu.inc),
// compiled here on the host with exp2f and a division in place of the device's
// ex2.approx and rcp.approx: the folded constants and the form that keeps the
// negative tail, against the exact tanh-approximation GELU.
#include <gtest/gtest.h>

#include <cmath>
#include <initializer_list>

namespace tessera::tile {
namespace {

#define TESSERA_MATH inline
#include "tile/detail/gelu.inc"

float gelu(float x) {
  return gelu(x, [](float a) { return std::exp2f(a); }, [](float d) { return 1.0f / d; });
}

// 0.5 x (1 + tanh(u)) in double, in the form that does not cancel for x < 0
// (1 + tanh(u) loses everything below 1e-16 of x).
double exact(double x) { return x / (1.0 + std::exp(-2.0 * 0.7978845608028654 * (x + 0.044715 * x * x * x))); }

TEST(TileGelu, MatchesTheTanhApproximationToFp32sRounding) {
  constexpr double kFp16Tiny = 5.96e-8;  // fp16's smallest subnormal: below it every result rounds to zero
  double worst = 0.0;
  float worst_x = 0.0f;
  int steps = 0;
  for (float x = -12.0f; x <= 12.0f; x += 1e-3f, ++steps) {
    const double want = exact(x);
    if (std::fabs(want) < kFp16Tiny) continue;
    const double rel = std::fabs(gelu(x) - want) / std::fabs(want);
    if (rel > worst) worst = rel, worst_x = x;
  }
  EXPECT_GT(steps, 20000);
  // Rounding the exponent at |a| ~ 24 costs 2e-6; half an fp16 ulp is 2.4e-4 or more.
  EXPECT_LT(worst, 4e-6) << "at x = " << worst_x;
}

TEST(TileGelu, KeepsTheNegativeTailRelative) {
  // Where 1 + tanh(u) would cancel: gelu(-4) is -1.3e-4 and gelu(-5.5) -4e-7.
  for (float x : {-2.0f, -3.0f, -4.0f, -5.0f, -5.5f}) EXPECT_NEAR(gelu(x) / exact(x), 1.0, 4e-6) << "x = " << x;
}

TEST(TileGelu, LargeInputsAndZero) {
  EXPECT_EQ(gelu(0.0f), 0.0f);
  EXPECT_FLOAT_EQ(gelu(30.0f), 30.0f);
  EXPECT_FLOAT_EQ(gelu(60000.0f), 60000.0f);  // x^3 overflows to inf: 2^-inf = 0, gelu(x) = x
  EXPECT_EQ(gelu(-30.0f), 0.0f);              // 1 + 2^-a is inf: -0, as the fp16 result rounds anyway
  EXPECT_EQ(gelu(-60000.0f), 0.0f);
}

}  // namespace
}  // namespace tessera::tile
