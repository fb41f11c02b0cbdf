// Zero false positives: the integrity protocol that catches the adversarial
// corpus (poisoned outputs before every timed launch, input variation,
// checked timed launches, hot-output rotation, post-timing audit,
// plausibility gate) must still pay every honest kernel. GPU only:
//  - every examples/*.cu under the full protocol (baselines, hot timing,
//    counters) and with the shape-generic claim;
//  - the tile compiler's sample (tests/tile/config_sample.hpp: every backend
//    and every knob value, both layouts, every epilogue), timed cold and hot.
//    TESSERA_TILE_GPU_SAMPLES sets its size (default 200).
#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "core/candidate.hpp"
#include "harness/candidate_build.hpp"
#include "harness/sandbox.hpp"
#include "tests/adversarial/corpus_manifest.hpp"
#include "tests/testing.hpp"
#include "tests/tile/config_sample.hpp"

namespace tessera::adversarial {
namespace {

constexpr const char* kExampleShape = "256x256x1024";

SandboxOptions sandbox() {
  SandboxOptions o;
  o.mode = EvalMode::full;
  o.self_exe = TESSERA_BINARY;
  return o;
}

TEST(ZeroFalsePositives, EveryExampleOkUnderTheFullProtocol) {
  TESSERA_REQUIRE_GPU();
  auto ev = make_evaluator(sandbox());
  const Task task = task_from_shape(kExampleShape);
  EvalOptions eo;
  eo.counter_set = "fast";
  eo.shape_generic = true;  // the examples are written for any M, N and K
  int evaluated = 0;
  for (const auto& f : std::filesystem::directory_iterator(std::filesystem::path(TESSERA_SOURCE_DIR) / "examples")) {
    if (f.path().extension() != ".cu") continue;
    // The torch-extension example needs its entry point named (docs/abi.md).
    BuildOptions build;
    if (f.path().filename() == "torch_ext_hgemm.cu") build.torch_entry = "hgemm(a, b_nk, c)";
    const EvalResult r = ev->evaluate(load_candidate_with(f.path(), "auto", build), task, eo);
    ++evaluated;
    EXPECT_EQ(r.status, Status::ok) << f.path().filename() << ": " << r.reason;
    if (r.status == Status::ok) {
      EXPECT_EQ(unguarded_ok(r, eo.hot), "") << f.path().filename();
    }
    std::printf("%-20s %-12s cold %.2f us, %d of %d timed calls checked\n", f.path().filename().c_str(),
                to_string(r.status).c_str(), r.cold.median_us, r.integrity.checked_calls, r.integrity.timed_calls);
  }
  EXPECT_GE(evaluated, 3);
}

TEST(ZeroFalsePositives, SampledTileConfigsOkWhenTimed) {
  TESSERA_REQUIRE_GPU();
  auto ev = make_evaluator(sandbox());
  const tile::Limits limits = tile::with_device(tile::Limits{}, ev->device());
  const int budget = tile::testing::sample_count();
  const auto sampled = tile::testing::sample_configs(limits, budget);
  EXPECT_TRUE(tile::testing::uncovered(sampled, limits).empty());
  std::vector<Candidate> cands;
  for (const auto& s : sampled) cands.push_back(tile::testing::candidate_of(s.config, s.task));
  ev->precompile(cands);
  EvalOptions eo;  // cold and hot timing, host latency; the baselines are not what is tested here
  eo.baselines = false;
  eo.counters = false;
  std::map<std::string, int> per_backend;
  std::vector<std::string> failures;
  for (std::size_t i = 0; i < sampled.size(); ++i) {
    const EvalResult r = ev->evaluate(cands[i], sampled[i].task, eo);
    ++per_backend[tile::to_string(sampled[i].config.backend)];
    const std::string why = r.status == Status::ok ? unguarded_ok(r, eo.hot) : to_string(r.status) + " " + r.reason;
    if (!why.empty()) failures.push_back(fmt::format("{} on {}: {}", cands[i].name, sampled[i].task.id(), why));
  }
  for (const auto& f : failures) ADD_FAILURE() << f;
  EXPECT_GE(sampled.size(), std::size_t(std::min(budget, tile::testing::kDefaultSamples)));
  for (const auto& [backend, n] : per_backend) std::printf("%s: %d configs\n", backend.c_str(), n);
  std::printf("%zu configs timed, %zu false positives\n", sampled.size(), failures.size());
}

}  // namespace
}  // namespace tessera::adversarial
