// GPU correctness of the tile compiler: a deterministic sample of legal
// configs (both backends, both layouts, odd shapes, all epilogues, every knob
// value: tests/tile/config_sample.hpp) must pass the harness's verification.
// Skips without a GPU. TESSERA_TILE_GPU_SAMPLES overrides the number of
// configs (default 200).
#include <gtest/gtest.h>

// The sandboxed evaluator (harness/sandbox.cpp) is written in parallel with
// this folder; until it is in the tree these tests skip instead of failing to link.
#if __has_include("harness/sandbox.cpp")
#define TESSERA_TILE_HAVE_EVALUATOR 1
#else
#define TESSERA_TILE_HAVE_EVALUATOR 0
#endif

#include <fmt/format.h>

#include "harness/sandbox.hpp"
#include "harness/tile/emit.hpp"
#include "harness/tile/legality.hpp"
#include "harness/tile/space.hpp"
#include "tests/testing.hpp"
#include "tests/tile/config_sample.hpp"

namespace tessera::tile {
namespace {

#if !TESSERA_TILE_HAVE_EVALUATOR
TEST(TileGpu, SampledLegalConfigsVerify) { GTEST_SKIP() << "harness/sandbox.cpp is not in this tree"; }
#else

// Verification only: correctness is the point of these tests, speed is
// measured by `tessera tile eval` / scripts/gpu_check.sh.
EvalOptions verify_only() {
  EvalOptions opt;
  opt.baselines = false;
  opt.counters = false;
  opt.timing = false;
  return opt;
}

TEST(TileGpu, SampledLegalConfigsVerify) {
  TESSERA_REQUIRE_GPU();
  auto evaluator = make_evaluator(SandboxOptions{});
  const Limits limits = with_device(Limits{}, evaluator->device());
  const int budget = testing::sample_count();
  const auto sampled = testing::sample_configs(limits, budget);
  std::vector<Candidate> cands;
  for (const auto& s : sampled) cands.push_back(testing::candidate_of(s.config, s.task));
  evaluator->precompile(cands);  // parallel compiles; the loop below finds them cached

  const EvalOptions opt = verify_only();
  std::vector<std::string> failures;
  int evaluated = 0, wgmma = 0;
  for (std::size_t i = 0; i < sampled.size(); ++i) {
    const EvalResult r = evaluator->evaluate(cands[i], sampled[i].task, opt);
    ++evaluated;
    wgmma += sampled[i].config.backend == Backend::wgmma_tma;
    if (r.status != Status::ok)
      failures.push_back(fmt::format("{} on {}: {} {}", cands[i].name, sampled[i].task.id(), to_string(r.status), r.reason));
  }
  for (const auto& f : failures) ADD_FAILURE() << f;
  EXPECT_GE(evaluated, std::min(budget, testing::kDefaultSamples));
  if (limits.arch == "sm_90a") {
    EXPECT_GT(wgmma, 0);
  }
  std::printf("evaluated %d configs (%d wgmma_tma), %zu failed\n", evaluated, wgmma, failures.size());
}

// Rings deeper than the sampled axis (up to kMaxStages) that wrap several
// times: 32 k-tiles through 16 and 12 stages, on both backends.
TEST(TileGpu, DeepRingsVerify) {
  TESSERA_REQUIRE_GPU();
  auto evaluator = make_evaluator(SandboxOptions{});
  const Limits limits = with_device(Limits{}, evaluator->device());
  const EvalOptions opt = verify_only();
  const Task t = task_from_shape("200x264x2048", "TN");
  std::vector<std::string> names = {"m64x64x64_g2x2_s12p11_pa_d1_sw_ed_r0_k1s_t_c1x1_none"};
  if (limits.arch == "sm_90a")
    names.insert(names.end(), {"w64x32x64_g1x1_s16p16_pa_d1_sw_es_r0_k1s_t_c1x1_none",
                               "w64x32x64_g1x1_s16p16_pa_d1_sw_ed_r0_k1s_t_c1x1_none"});
  for (const auto& n : names) {
    const Config c = parse_name(n);
    ASSERT_TRUE(legality(c, t, limits).ok) << n << ": " << legality(c, t, limits).reason;
    const EvalResult r = evaluator->evaluate(testing::candidate_of(c, t), t, opt);
    EXPECT_EQ(r.status, Status::ok) << n << ": " << r.reason;
  }
}

// The large square shape only with the seeds (the fast configs).
TEST(TileGpu, SeedsVerifyOnLargeSquare) {
  TESSERA_REQUIRE_GPU();
  auto evaluator = make_evaluator(SandboxOptions{});
  const Limits limits = with_device(Limits{}, evaluator->device());
  const EvalOptions opt = verify_only();
  for (const char* layout : {"TN", "NN"}) {
    const Task t = task_from_shape("8192x8192x8192", layout);
    for (const auto& c : seeds(t, limits)) {
      const EvalResult r = evaluator->evaluate(testing::candidate_of(c, t), t, opt);
      EXPECT_EQ(r.status, Status::ok) << name(c) << " " << t.id() << ": " << r.reason;
    }
  }
}

#endif  // TESSERA_TILE_HAVE_EVALUATOR

}  // namespace
}  // namespace tessera::tile
