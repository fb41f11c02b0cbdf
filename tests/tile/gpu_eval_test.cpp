// GPU correctness of the tile compiler: a deterministic sample of legal
// configs (both backends, both layouts, odd shapes, all epilogues, every knob
// value: tests/tile/config_sample.hpp) must pass the harness's verification.
// Skips without a GPU. TESSERA_TILE_GPU_SAMPLES overrides the number of
// configs (default 200).
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "harness/sandbox.hpp"
#include "tile/cost_model.hpp"
#include "tile/emit.hpp"
#include "tile/legality.hpp"
#include "tile/space.hpp"
#include "tests/testing.hpp"
#include "tests/tile/config_sample.hpp"
#include "tests/tile/new_paths.hpp"

namespace tessera::tile {
namespace {

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

// Evaluates named configs on one shape (each must be legal there) and reports
// every one that does not verify.
void verify_named(Evaluator& evaluator, const Limits& limits, const Task& t, const std::vector<std::string>& names) {
  const EvalOptions opt = verify_only();
  std::vector<Candidate> cands;
  for (const auto& n : names) {
    const Config c = parse_name(n);
    ASSERT_TRUE(legality(c, t, limits).ok) << n << " on " << t.id() << ": " << legality(c, t, limits).reason;
    cands.push_back(testing::candidate_of(c, t));
  }
  evaluator.precompile(cands);
  for (const auto& n : names) {
    const EvalResult r = evaluator.evaluate(testing::candidate_of(parse_name(n), t), t, opt);
    EXPECT_EQ(r.status, Status::ok) << n << " on " << t.id() << ": " << r.reason;
  }
}

// Every code path issue 18 added (tests/tile/new_paths.hpp).
TEST(TileGpu, NewPathsVerify) {
  TESSERA_REQUIRE_GPU();
  auto evaluator = make_evaluator(SandboxOptions{});
  const Limits limits = with_device(Limits{}, evaluator->device());
  for (const auto& k : testing::new_path_cases()) {
    std::vector<std::string> names;
    for (const auto& n : k.names)
      if (n[0] == 'm' || limits.arch == "sm_90a") names.push_back(n);  // wgmma needs sm_90a
    verify_named(*evaluator, limits, task_from_shape(k.shape, k.layout, k.epilogue), names);
  }
}

// What a tune tries first: the cost model's top picks for LLM layers.
TEST(TileGpu, ModelTopPicksVerifyOnLlmShapes) {
  TESSERA_REQUIRE_GPU();
  auto evaluator = make_evaluator(SandboxOptions{});
  const Limits limits = with_device(Limits{}, evaluator->device());
  for (const char* shape : {"1x4096x14336", "100x3584x18944", "257x6144x4096", "1537x4096x4096"}) {
    const Task t = task_from_shape(shape);
    std::vector<std::string> names;
    for (const auto& r : rank_configs(t, limits, 8)) names.push_back(name(r.config));
    verify_named(*evaluator, limits, t, names);
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

}  // namespace
}  // namespace tessera::tile
