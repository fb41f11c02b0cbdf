// End to end with the real pieces and no GPU: the LLM proposer's recorded
// responses replayed (ReplayProposer) through the search into the sandboxed
// evaluator in compile-only mode; and the `tessera search` CLI on the same.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>

#include "agent/proposers.hpp"
#include "engine_helpers.hpp"
#include "core/fs.hpp"
#include "harness/sandbox.hpp"
#include "search/export.hpp"
#include "search/report.hpp"
#include "tests/agent/test_server.hpp"

namespace tessera::search::testing {
namespace {

namespace fs = std::filesystem;

// A trajectories file as an LLM run records it: chat messages and full-source actions.
fs::path recorded_llm_run(const fs::path& dir) {
  const std::string naive = read_file(fs::path(TESSERA_SOURCE_DIR) / "examples" / "hgemm_naive.cu");
  const std::string wmma = read_file(fs::path(TESSERA_SOURCE_DIR) / "examples" / "hgemm_wmma.cu");
  std::string text;
  int step = 0;
  for (const auto& [src, note] : std::vector<std::pair<std::string, std::string>>{
           {naive, "start simple"}, {wmma, "use tensor cores"}, {naive + "\nint broken = ;\n", "broken"}}) {
    nlohmann::json r = {{"step", step++},
                        {"messages",
                         {{{"role", "user"}, {"content", "Write an HGEMM kernel: " + note}},
                          {{"role", "assistant"}, {"content", "```cuda\n" + src + "\n```"}}}},
                        {"action", {{"kind", "full_source"}, {"content", src}}}};
    text += r.dump() + "\n";
  }
  const fs::path p = dir / "recorded.jsonl";
  atomic_write_file(p, text);
  return p;
}

TEST(ReplayEndToEnd, RecordedResponsesRunThroughTheCompileOnlyHarness) {
  // The sandbox compiles in a `tessera __worker` process: it needs the binary.
  if (!fs::exists(TESSERA_BINARY)) GTEST_SKIP() << "the tessera binary is not built: " << TESSERA_BINARY;
  const auto dir = fresh_dir("replay_e2e");
  const fs::path recorded = recorded_llm_run(dir);
  ProposerSlot slot;
  slot.name = "replay";
  slot.proposer = agent::make_replay_proposer(recorded);
  SandboxOptions so;
  so.mode = EvalMode::compile_only;
  so.self_exe = TESSERA_BINARY;
  std::vector<std::unique_ptr<Evaluator>> evals;
  evals.push_back(make_evaluator(so));
  auto cfg = small_config("bandit", 3);
  cfg.compile_only = true;
  EngineOptions opts;
  opts.run_dir = dir / "run";
  const auto summary =
      SearchEngine(cfg, {task_from_shape("256x256x256")}, {slot}, std::move(evals), opts).run();
  EXPECT_EQ(summary.totals.steps, 3);
  const auto recs = records(dir / "run");
  ASSERT_EQ(recs.size(), 3u);
  int compiled = 0, compile_errors = 0;
  for (const auto& r : recs) {
    EXPECT_EQ(r["proposer_name"], "replay");
    EXPECT_EQ(r["proposer"]["name"], "replay");
    EXPECT_EQ(r["messages"].size(), 2u);
    ASSERT_TRUE(r["evaluated"].get<bool>()) << r.dump();
    EXPECT_EQ(r["eval"]["mode"], "compile_only");
    compiled += r["eval"]["status"] == "compiled";
    compile_errors += r["eval"]["status"] == "compile_error";
    EXPECT_FALSE(r["reward"]["timed"].get<bool>());
  }
  EXPECT_EQ(compiled, 2);
  EXPECT_EQ(compile_errors, 1);
  const auto view = load_run(dir / "run");
  EXPECT_TRUE(view.compile_only);
  EXPECT_NE(read_file(write_report(view)).find("Compile-only run"), std::string::npos);
  EXPECT_EQ(export_run(dir / "run", "rl").lines, 3);
}

int run_cli(const std::string& args, std::string* output) { return tessera::testing::run_tessera(args, output); }

TEST(SearchCli, ReplayRunCompletesInCompileOnlyModeAndExports) {
  if (!fs::exists(TESSERA_BINARY)) GTEST_SKIP() << "the tessera binary is not built: " << TESSERA_BINARY;
  const auto dir = fresh_dir("cli_replay");
  const fs::path recorded = recorded_llm_run(dir);
  std::string out;
  const int code = run_cli("search --shape 256x256x256 --compile-only --proposers replay --replay " +
                               recorded.string() + " --budget-evals 3 --seed 4 --quiet --out " + (dir / "run").string(),
                           &out);
  ASSERT_EQ(code, 0) << out;
  EXPECT_NE(out.find("COMPILE-ONLY"), std::string::npos) << out;
  EXPECT_NE(out.find("report:"), std::string::npos) << out;
  EXPECT_EQ(records(dir / "run").size(), 3u);
  std::string exp;
  ASSERT_EQ(run_cli("export " + (dir / "run").string() + " --format rl", &exp), 0) << exp;
  EXPECT_TRUE(fs::exists(dir / "run" / "export" / "rl.jsonl"));
  // The same directory again is refused with one clear line, and so are bad arguments.
  std::string again;
  EXPECT_EQ(run_cli("search --shape 256x256x256 --compile-only --out " + (dir / "run").string(), &again), 2);
  EXPECT_NE(again.find("--resume"), std::string::npos) << again;
  std::string bad;
  EXPECT_NE(run_cli("search --shape 256x256x256 --compile-only --method anneal --out " + (dir / "bad").string(), &bad),
            0);
  EXPECT_NE(bad.find("evolve | bandit"), std::string::npos) << bad;
  std::string nollm;
  EXPECT_NE(run_cli("search --shape 256x256x256 --compile-only --proposers llm --out " + (dir / "nollm").string(),
                    &nollm),
            0);
  EXPECT_NE(nollm.find("TESSERA_LLM"), std::string::npos) << nollm;
}

// --far-slower is checked before any work and kept with the run, so a resume
// proposes under the bound the run started with.
TEST(SearchCli, TheFarSlowerBoundIsCheckedAndKeptWithTheRun) {
  if (!fs::exists(TESSERA_BINARY)) GTEST_SKIP() << "the tessera binary is not built: " << TESSERA_BINARY;
  const auto dir = fresh_dir("cli_far_slower");
  std::string bad;
  EXPECT_EQ(run_cli("search --shape 256x256x256 --compile-only --far-slower 0.5 --out " + (dir / "bad").string(), &bad),
            2);
  EXPECT_NE(bad.find("--far-slower 0.5 must be at least 1"), std::string::npos) << bad;
  EXPECT_FALSE(fs::exists(dir / "bad")) << "nothing written for a refused run";
  EXPECT_EQ(run_cli("search --shape 256x256x256 --compile-only --far-slower 0 --out " + (dir / "zero").string(), &bad),
            2) << "0 is not the default's spelling";
  EXPECT_NE(bad.find("--far-slower 0 must be at least 1"), std::string::npos) << bad;
  std::string out;
  const std::string run = (dir / "run").string();
  ASSERT_EQ(run_cli("search --shape 256x256x256 --compile-only --far-slower 1.3 --budget-evals 2 --quiet --out " + run,
                    &out),
            0)
      << out;
  const auto config = nlohmann::json::parse(read_file(dir / "run" / "config.json"));
  EXPECT_EQ(config.at("extra").value("far_slower", 0.0), 1.3) << config.dump();
  ASSERT_EQ(run_cli("search --resume " + run + " --budget-evals 3 --quiet", &out), 0) << out;
  EXPECT_EQ(records(dir / "run").size(), 3u);
  std::string plain;
  ASSERT_EQ(run_cli("search --shape 256x256x256 --compile-only --budget-evals 1 --quiet --out " +
                        (dir / "plain").string(), &plain), 0) << plain;
  EXPECT_FALSE(nlohmann::json::parse(read_file(dir / "plain" / "config.json")).at("extra").contains("far_slower"));
}

}  // namespace
}  // namespace tessera::search::testing
