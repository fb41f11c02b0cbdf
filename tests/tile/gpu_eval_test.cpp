// GPU correctness of the tile compiler: a deterministic sample of legal
// configs (both backends, both layouts, odd shapes, all epilogues) must pass
// the harness's verification. Skips without a GPU.
// TESSERA_TILE_GPU_SAMPLES overrides the number of configs (default 200).
#include <gtest/gtest.h>

// The sandboxed evaluator (harness/sandbox.cpp) is written in parallel with
// this folder; until it is in the tree these tests skip instead of failing to link.
#if __has_include("harness/sandbox.cpp")
#define TESSERA_TILE_HAVE_EVALUATOR 1
#else
#define TESSERA_TILE_HAVE_EVALUATOR 0
#endif

#include <cstdlib>
#include <random>
#include <set>

#include <fmt/format.h>

#include "harness/sandbox.hpp"
#include "harness/tile/cost_model.hpp"
#include "harness/tile/emit.hpp"
#include "harness/tile/legality.hpp"
#include "harness/tile/space.hpp"
#include "tests/testing.hpp"
#include "tests/tile/new_paths.hpp"

namespace tessera::tile {
namespace {

#if !TESSERA_TILE_HAVE_EVALUATOR
TEST(TileGpu, SampledLegalConfigsVerify) { GTEST_SKIP() << "harness/sandbox.cpp is not in this tree"; }
#else

constexpr int kDefaultSamples = 200;
constexpr std::uint64_t kSampleSeed = 5;

int sample_count() {
  if (const char* s = std::getenv("TESSERA_TILE_GPU_SAMPLES")) return std::max(1, std::atoi(s));
  return kDefaultSamples;
}

Candidate candidate_of(const Config& c, const Task& t) {
  Candidate cand;
  cand.source = emit(c, t);
  cand.name = name(c);
  cand.meta["tile_config"] = to_json(c);
  return cand;
}

// Verification only: correctness is the point of these tests, speed is
// measured by `tessera tile eval` / scripts/gpu_check.sh.
EvalOptions verify_only() {
  EvalOptions opt;
  opt.baselines = false;
  opt.counters = false;
  opt.timing = false;
  return opt;
}

struct Shape {
  const char* mnk;
  const char* layout;
  const char* epilogue;
  int weight;  // share of the sampled configs
};

TEST(TileGpu, SampledLegalConfigsVerify) {
  TESSERA_REQUIRE_GPU();
  auto evaluator = make_evaluator(SandboxOptions{});
  const Limits limits = with_device(Limits{}, evaluator->device());

  const std::vector<Shape> shapes = {
      {"1x4096x4096", "TN", "none", 4},        {"100x5000x3000", "TN", "none", 4},
      {"100x5000x3000", "NN", "bias", 3},      {"257x1000x520", "NN", "bias_gelu", 3},
      {"100x5000x3001", "TN", "bias_relu", 2}, {"333x777x1000", "TN", "none", 2},
      {"2048x2048x2048", "TN", "none", 1},     {"64x64x8192", "NN", "none", 1},
      // LLM layers: decode, M just past a multiple of 128, skinny long K.
      {"7x2112x7168", "TN", "bias", 2},        {"257x1000x4096", "TN", "none", 2},
      {"100x1024x18944", "TN", "bias_gelu", 2},
  };
  int total_weight = 0;
  for (const auto& s : shapes) total_weight += s.weight;
  const int budget = sample_count();

  const EvalOptions opt = verify_only();
  std::mt19937_64 rng(kSampleSeed);
  std::vector<std::string> failures;
  int evaluated = 0, wgmma = 0;
  for (const auto& s : shapes) {
    const Task t = task_from_shape(s.mnk, s.layout, s.epilogue);
    const Space space = default_space(t, limits);
    const int n = std::max(1, budget * s.weight / total_weight);
    std::set<std::string> seen;
    std::vector<Config> configs = seeds(t, limits);
    for (int miss = 0; int(configs.size()) < n && miss < 100 * n;) {
      auto c = sample(space, t, limits, rng);
      if (c && seen.insert(name(*c)).second) configs.push_back(*c);
      else ++miss;
    }
    if (int(configs.size()) > n) configs.resize(std::max<std::size_t>(n, 4));
    std::vector<Candidate> cands;
    for (const auto& c : configs) cands.push_back(candidate_of(c, t));
    evaluator->precompile(cands);  // parallel compiles; the loop below finds them cached
    for (const auto& c : configs) {
      const EvalResult r = evaluator->evaluate(candidate_of(c, t), t, opt);
      ++evaluated;
      wgmma += c.backend == Backend::wgmma_tma;
      if (r.status != Status::ok)
        failures.push_back(fmt::format("{} on {}: {} {}", name(c), t.id(), to_string(r.status), r.reason));
    }
  }
  for (const auto& f : failures) ADD_FAILURE() << f;
  EXPECT_GE(evaluated, std::min(budget, kDefaultSamples));
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
    const EvalResult r = evaluator->evaluate(candidate_of(c, t), t, opt);
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
    cands.push_back(candidate_of(c, t));
  }
  evaluator.precompile(cands);
  for (const auto& n : names) {
    const EvalResult r = evaluator.evaluate(candidate_of(parse_name(n), t), t, opt);
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
      const EvalResult r = evaluator->evaluate(candidate_of(c, t), t, opt);
      EXPECT_EQ(r.status, Status::ok) << name(c) << " " << t.id() << ": " << r.reason;
    }
  }
}

#endif  // TESSERA_TILE_HAVE_EVALUATOR

}  // namespace
}  // namespace tessera::tile
