// A replay-driven search in compile-only mode, stopped after k steps and
// resumed, makes the decisions of a run that was never interrupted: the
// resumed session's fresh ReplayProposer serves each step the record of that
// step, not the file's first records again. Run with a fake compile-only
// evaluator (always) and with the sandboxed one (when the tessera binary is built).
#include <gtest/gtest.h>

#include <cstdlib>
#include <functional>
#include <optional>

#include "agent/proposers.hpp"
#include "engine_helpers.hpp"
#include "core/fs.hpp"
#include "harness/sandbox.hpp"
#include "tests/testing.hpp"

namespace tessera::search::testing {
namespace {

using ::tessera::testing::ScopedEnv;

namespace fs = std::filesystem;

constexpr long long kSteps = 9;
constexpr long long kFailedStep = 3;     // its recorded proposal failed: no replayable record
constexpr long long kDuplicateStep = 5;  // repeats step 2's kernel
constexpr long long kBrokenStep = 6;     // does not compile

// The kernel recorded for a step: a real example, made distinct by a define
// (a comment would not do: the novelty check strips comments).
std::string recorded_source(long long step) {
  if (step == kDuplicateStep) return recorded_source(2);
  const char* example = step % 2 == 0 ? "hgemm_naive.cu" : "hgemm_wmma.cu";
  std::string src = read_file(fs::path(TESSERA_SOURCE_DIR) / "examples" / example);
  src += "\n#define TESSERA_REPLAY_VARIANT " + std::to_string(step) + "\n";
  if (step == kBrokenStep) src += "#error recorded kernel that does not compile\n";
  return src;
}

// A trajectories file as a recorded LLM run leaves it, one record per step.
fs::path recorded_run(const fs::path& dir) {
  std::string text = R"({"run": "header only"})" "\n";
  for (long long step = 0; step < kSteps; ++step) {
    nlohmann::json r = {{"step", step}};
    if (step == kFailedStep) {
      r["proposal_ok"] = false;
      r["action"] = {{"kind", ""}, {"content", ""}};
    } else {
      const std::string src = recorded_source(step);
      r["messages"] = {{{"role", "user"}, {"content", "step " + std::to_string(step)}},
                       {{"role", "assistant"}, {"content", "```cuda\n" + src + "```"}}};
      r["action"] = {{"kind", "full_source"}, {"content", src}};
    }
    text += r.dump() + "\n";
  }
  const fs::path p = dir / "recorded.jsonl";
  atomic_write_file(p, text);
  return p;
}

using EvaluatorFactory = std::function<std::unique_ptr<Evaluator>()>;

// One session over `run_dir` with a fresh replay proposer, as `tessera search
// --resume` builds it; halt_after >= 0 abandons the run after that many steps.
RunSummary run_replay(const SearchConfig& cfg, const fs::path& recorded, const fs::path& run_dir,
                      const EvaluatorFactory& make, long long halt_after = -1) {
  ProposerSlot slot;
  slot.name = "replay";
  slot.proposer = agent::make_replay_proposer(recorded);
  std::vector<std::unique_ptr<Evaluator>> evals;
  evals.push_back(make());
  EngineOptions opts;
  opts.run_dir = run_dir;
  opts.halt_after_steps = halt_after;
  return SearchEngine(cfg, {task_from_shape("256x256x256")}, {slot}, std::move(evals), opts).run();
}

// Each step got the record of that step (the check that fails when records
// are served in call order).
void expect_served_by_step(const fs::path& run_dir) {
  for (const auto& r : records(run_dir)) {
    const long long step = r.at("step").get<long long>();
    if (step == kFailedStep) {
      EXPECT_FALSE(r["proposal_ok"].get<bool>()) << "step " << step;
      EXPECT_NE(r["proposal_error"].get<std::string>().find("no record for step 3"), std::string::npos) << r["proposal_error"];
      continue;
    }
    ASSERT_TRUE(r["proposal_ok"].get<bool>()) << "step " << step << ": " << r["proposal_error"];
    EXPECT_EQ(r["proposer_info"]["step"], step) << "the step whose record was served";
    EXPECT_TRUE(r["action"]["content"] == recorded_source(step)) << "step " << step;
    if (step == kDuplicateStep) {
      EXPECT_EQ(r["duplicate_of"], 2);
    } else {
      EXPECT_TRUE(r["evaluated"].get<bool>()) << "step " << step;
    }
    if (step == kBrokenStep) {
      EXPECT_EQ(r["eval"]["status"], "compile_error");
    }
  }
}

// The JSON pointers where two records differ (the records hold whole kernels:
// too long to print).
std::string differing_fields(const nlohmann::json& a, const nlohmann::json& b) {
  std::string out;
  for (const auto& op : nlohmann::json::diff(a, b)) out += op.at("path").get<std::string>() + " ";
  return out;
}

void expect_resume_matches(const std::string& name, const std::string& method, const EvaluatorFactory& make,
                           std::vector<long long> halts) {
  const auto dir = fresh_dir(name);
  const fs::path recorded = recorded_run(dir);
  auto cfg = small_config(method, kSteps, 3);
  cfg.compile_only = true;
  run_replay(cfg, recorded, dir / "whole", make);
  expect_served_by_step(dir / "whole");
  const auto whole = decisions(dir / "whole");
  ASSERT_EQ(whole.size(), std::size_t(kSteps));

  // Stopped after each of `halts` in turn (each session abandons the steps in
  // flight), then resumed to the end.
  const fs::path parts = dir / "parts";
  long long applied = 0;
  for (long long halt : halts) {
    const auto s = run_replay(cfg, recorded, parts, make, halt - applied);
    EXPECT_EQ(s.stop_reason, "halted");
    EXPECT_EQ(s.resumed_steps, applied);
    applied = halt;
  }
  const auto s = run_replay(cfg, recorded, parts, make);
  EXPECT_EQ(s.resumed_steps, applied);
  EXPECT_EQ(s.stop_reason, "budget_evals");
  expect_served_by_step(parts);
  const auto resumed = decisions(parts);
  ASSERT_EQ(resumed.size(), whole.size());
  for (std::size_t i = 0; i < whole.size(); ++i) {
    EXPECT_TRUE(resumed[i]["action"] == whole[i]["action"]) << "step " << i << ": another action";
    EXPECT_TRUE(resumed[i] == whole[i]) << "step " << i << " differs at " << differing_fields(whole[i], resumed[i]);
  }
}

EvaluatorFactory fake_compile_only() {
  return [] { return std::make_unique<FakeEvaluator>(); };
}

TEST(ReplayResume, FakeCompileOnlyRunResumedMatchesAnUninterruptedOne) {
  expect_resume_matches("replay_resume_fake_bandit", "bandit", fake_compile_only(), {2, 4, 7});
  expect_resume_matches("replay_resume_fake_evolve", "evolve", fake_compile_only(), {1, 5});
}

TEST(ReplayResume, SandboxCompileOnlyRunResumedMatchesAnUninterruptedOne) {
  // The sandbox compiles in a `tessera __worker` process: it needs the binary.
  if (!fs::exists(TESSERA_BINARY)) GTEST_SKIP() << "the tessera binary is not built: " << TESSERA_BINARY;
  // An empty kernel cache: the uninterrupted run compiles, the resumed one is
  // served from the cache, and the decisions must not tell the difference.
  const ScopedEnv cache("TESSERA_CACHE_DIR", fresh_dir("replay_resume_cache").string());
  const EvaluatorFactory sandbox = [] {
    SandboxOptions so;
    so.mode = EvalMode::compile_only;
    so.self_exe = TESSERA_BINARY;
    return make_evaluator(so);
  };
  expect_resume_matches("replay_resume_sandbox", "bandit", sandbox, {4});
}

}  // namespace
}  // namespace tessera::search::testing
