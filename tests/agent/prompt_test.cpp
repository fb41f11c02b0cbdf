// Prompt templates, the builder's content and its token-budget trimming.
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "agent/prompt.hpp"
#include "agent/strategies.hpp"
#include "core/error.hpp"
#include "tile/cost_model.hpp"
#include "tile/learned_model.hpp"
#include "tests/testing.hpp"

namespace tessera::agent {
namespace {

Evaluated kernel(const std::string& name, const std::string& source, Status status, double speedup) {
  Evaluated e;
  e.candidate.name = name;
  e.candidate.source = source;
  e.result.status = status;
  e.result.speedup = speedup;
  e.result.best_baseline = "cublaslt_autotuned";
  e.result.best_baseline_us = 100;
  e.result.cold.status = status == Status::ok ? "measured" : "skipped";
  e.result.cold.median_us = 100 / (speedup > 0 ? speedup : 1);
  return e;
}

ProposalContext context() {
  ProposalContext c;
  c.task.m = 4096;
  c.task.n = 4096;
  c.task.k = 4096;
  c.gpu = {"NVIDIA H100 80GB HBM3", 132, 232448, 52428800, 750, "sm_90a"};
  c.strategy = "pipelining";
  c.parent = kernel("parent_v3", "extern \"C\" __global__ void tessera_hgemm() {\n\n\n  int x[2] = {{0}}; }", Status::ok, 0.8);
  c.parent->result.counters = {{"sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active", 35.0},
                               {"dram__throughput.avg.pct_of_peak_sustained_elapsed", 20.0}};
  c.parent->result.compile.log = std::string(20000, 'w');
  for (int i = 0; i < 10; ++i)
    c.history.push_back(kernel("attempt_" + std::to_string(i), "src", i % 2 ? Status::ok : Status::compile_error, 0.5 + i * 0.01));
  for (int i = 0; i < 3; ++i) c.inspirations.push_back(kernel("elite_" + std::to_string(i), std::string(8000, 'e'), Status::ok, 0.9));
  return c;
}

TEST(Template, SubstitutesAndRejectsUnknownPlaceholders) {
  EXPECT_EQ(render_template("a {{x}} b {{ y }} c", {{"x", "1"}, {"y", "{{x}}"}}, "t"), "a 1 b {{x}} c");
  try {
    render_template("hello {{nope}}", {{"x", "1"}}, "greeting");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), Error::Kind::bad_input);
    EXPECT_NE(std::string(e.what()).find("'greeting' uses unknown placeholder {{nope}}"), std::string::npos) << e.what();
  }
}

TEST(Template, EveryStrategyHasATemplateFile) {
  PromptTemplates t(default_prompt_dir());
  for (const auto& s : strategies()) EXPECT_TRUE(t.has("strategy_" + s.name)) << s.name;
  EXPECT_THROW(t.get("does_not_exist"), Error);
}

TEST(Prompt, SystemHasGpuAndAbiAndUserHasEverythingMeasured) {
  PromptOptions o;
  o.max_prompt_tokens = 1000000;
  PromptBuilder b(o);
  const auto msgs = b.build(context());
  ASSERT_EQ(msgs.size(), 2u);
  EXPECT_EQ(msgs[0].role, "system");
  EXPECT_NE(msgs[0].content.find("NVIDIA H100 80GB HBM3 (sm_90a), 132 SMs, 227 KiB"), std::string::npos);
  EXPECT_NE(msgs[0].content.find("struct TesseraGemmParams"), std::string::npos);  // the ABI header text
  EXPECT_NE(msgs[0].content.find("<<<<<<< SEARCH"), std::string::npos);            // a parent: diffs allowed
  const std::string& u = msgs[1].content;
  EXPECT_NE(u.find("M = 4096, N = 4096, K = 4096"), std::string::npos);
  EXPECT_NE(u.find("cp.async"), std::string::npos);  // the pipelining fragment
  EXPECT_NE(u.find("int x[2] = {{0}};"), std::string::npos);  // braces in code survive
  EXPECT_NE(u.find("tessera_hgemm() {\n\n\n  int x"), std::string::npos);  // blank lines in code survive
  EXPECT_EQ(u.find("\n\n\n#"), std::string::npos);  // but not runs between sections
  EXPECT_NE(u.find("speedup 0.800x"), std::string::npos);
  EXPECT_NE(u.find("latency-bound"), std::string::npos);
  EXPECT_NE(u.find("attempt_9"), std::string::npos);
  EXPECT_EQ(u.find("attempt_3:"), std::string::npos);  // only the last kDefaultMaxHistory
  EXPECT_NE(u.find("elite_1"), std::string::npos);
  EXPECT_NE(u.find("characters trimmed"), std::string::npos);  // the 20000-char log
  EXPECT_EQ(u.find("{{"), u.find("{{0}}"));  // no placeholder left unrendered
}

TEST(Prompt, ResultShowsEveryBaselineNotOnlyTheFastest) {
  auto e = kernel("k", "src", Status::ok, 0.5);
  EXPECT_EQ(describe_result(e.result, kDefaultMaxLogChars).find("baselines, cold median"), std::string::npos);  // one: the best line says it
  e.result.baselines = {{"cublas_tn", "default", {}, ""}, {"cublaslt_heuristic", "algo 0", {}, ""},
                        {"cublaslt_autotuned", "", {}, "no algorithm"}};
  e.result.baselines[0].cold.status = "measured";
  e.result.baselines[0].cold.median_us = 812.25;
  e.result.baselines[1].cold.status = "measured";
  e.result.baselines[1].cold.median_us = 790.5;
  const auto text = describe_result(e.result, kDefaultMaxLogChars);
  EXPECT_NE(text.find("- baselines, cold median: cublas_tn 812.25 us, cublaslt_heuristic 790.50 us, cublaslt_autotuned failed"),
            std::string::npos)
      << text;
}

TEST(Prompt, NoParentAsksForAFullKernel) {
  auto c = context();
  c.parent.reset();
  c.strategy.clear();
  const auto msgs = PromptBuilder(PromptOptions{}).build(c);
  EXPECT_EQ(msgs[0].content.find("<<<<<<< SEARCH"), std::string::npos);
  EXPECT_NE(msgs[1].content.find("from scratch"), std::string::npos);
}

TEST(Prompt, ShowsTheCostModelsTopPicksWithTheirPredictedTimes) {
  auto c = context();
  tile::Limits limits;
  limits.sm_count = 132;
  limits.smem_optin_bytes = 232448;
  limits.l2_bytes = 52428800;
  limits.peak_tflops = tile::kH200PeakTflops;  // a Hopper ranks at its kind's peak, not the 750 it measured
  const auto model = tile::model_for_device(tile::device_kind(c.gpu.name));
  const auto top = tile::rank_configs(c.task, limits, 3, model);
  ASSERT_EQ(top.size(), 3u);
  PromptOptions o;
  o.model_picks = 3;
  const std::string user = PromptBuilder(o).build(c)[1].content;
  const auto section = user.find("What the cost model predicts");
  ASSERT_NE(section, std::string::npos) << user.substr(0, 2000);
  for (const auto& r : top) {
    const auto at = user.find("- " + tile::name(r.config) + ": ");
    EXPECT_NE(at, std::string::npos) << tile::name(r.config);
    EXPECT_EQ(user.substr(at, 200).find(fmt::format("{:.1f} us predicted", r.prediction.time_us)) != std::string::npos, true);
  }
  o.model_picks = 0;
  EXPECT_EQ(PromptBuilder(o).build(c)[1].content.find("What the cost model predicts"), std::string::npos);
}

// A builder reads the cost model from disk once (a shipped model is megabytes
// of trees): its later prompts rank with the model it read, even once the file
// is gone, where a new builder finds none and ranks with the analytical model.
TEST(Prompt, ModelPicksReadTheCostModelOnce) {
  if (!tile::LearnedModel::available()) GTEST_SKIP() << "built without XGBoost (install libxgboost-dev): no learned model";
  const auto pooled = std::filesystem::path(TESSERA_SOURCE_DIR) / "datasets" / "cost_models" / "all.json";
  const auto dir = std::filesystem::temp_directory_path() / fmt::format("tessera-prompt-model-{}", ::getpid());
  std::filesystem::create_directories(dir);
  const auto copy = dir / "all.json";
  std::filesystem::copy_file(pooled, copy, std::filesystem::copy_options::overwrite_existing);
  const testing::ScopedEnv env("TESSERA_COST_MODEL", copy.string());
  const std::string learned = tile::LearnedModel::load(copy).describe() + " cost model";
  PromptOptions o;
  o.model_picks = 3;
  const PromptBuilder b(o);
  const auto c = context();
  const std::string first = b.build(c)[1].content;
  EXPECT_NE(first.find(learned), std::string::npos) << learned;
  std::filesystem::remove_all(dir);
  EXPECT_EQ(b.build(c)[1].content, first);
  const std::string fresh = PromptBuilder(o).build(c)[1].content;
  EXPECT_EQ(fresh.find(learned), std::string::npos);
  EXPECT_NE(fresh.find("(analytical cost model)"), std::string::npos);
}

TEST(Prompt, TrimsInspirationsThenHistoryThenLogToFitTheBudget) {
  PromptOptions o;
  const auto c = context();
  o.max_prompt_tokens = 1000000;
  const auto full = PromptBuilder(o).build(c);
  const size_t full_tokens = approx_tokens(full[0].content) + approx_tokens(full[1].content);
  o.max_prompt_tokens = full_tokens - 1000;  // one 8000-char inspiration is 2000 tokens
  const auto trimmed = PromptBuilder(o).build(c);
  EXPECT_LE(approx_tokens(trimmed[0].content) + approx_tokens(trimmed[1].content), o.max_prompt_tokens);
  EXPECT_NE(trimmed[1].content.find("elite_0"), std::string::npos);
  EXPECT_EQ(trimmed[1].content.find("elite_1"), std::string::npos);
  o.max_prompt_tokens = approx_tokens(full[0].content) + 800;  // forces everything optional out
  const auto tight = PromptBuilder(o).build(c);
  EXPECT_EQ(tight[1].content.find("elite_0"), std::string::npos);
  EXPECT_EQ(tight[1].content.find("attempt_9"), std::string::npos);
  EXPECT_NE(tight[1].content.find("int x[2] = {{0}};"), std::string::npos);  // the source is never cut
}

TEST(Prompt, RewriteArmAsksForAFullKernelEvenWithAParent) {
  auto c = context();
  c.strategy = "rewrite";
  const auto msgs = PromptBuilder(PromptOptions{}).build(c);
  EXPECT_EQ(msgs[0].content.find("<<<<<<< SEARCH"), std::string::npos);
  EXPECT_NE(msgs[1].content.find("parent_v3"), std::string::npos);  // the parent is still shown
}

TEST(Prompt, UnknownStrategyIsBadInput) {
  auto c = context();
  c.strategy = "vibes";
  EXPECT_THROW(PromptBuilder(PromptOptions{}).build(c), Error);
}

TEST(Prompt, MissingTemplateDirectoryIsAClearError) {
  PromptOptions o;
  o.prompt_dir = "/nonexistent/prompts";
  try {
    PromptBuilder b(o);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/prompts"), std::string::npos);
  }
}

TEST(Strategies, BottleneckReadingAndMasking) {
  const nlohmann::json compute = {{"sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active", 91.0},
                                  {"dram__throughput.avg.pct_of_peak_sustained_elapsed", 40.0},
                                  {"sm__throughput.avg.pct_of_peak_sustained_elapsed", 93.0}};
  auto r = read_bottleneck(compute);
  EXPECT_NE(r.summary.find("compute-bound"), std::string::npos) << r.summary;
  const auto arms = unmasked_strategies(compute);
  EXPECT_EQ(std::count(arms.begin(), arms.end(), "tiling"), 0);
  EXPECT_EQ(std::count(arms.begin(), arms.end(), "pipelining"), 1);

  const nlohmann::json memory = {{"metrics", {{"dram__throughput.avg.pct_of_peak_sustained_elapsed", {{"value", 88.0}}}}}};
  r = read_bottleneck(memory);
  EXPECT_NE(r.summary.find("memory-bandwidth-bound"), std::string::npos) << r.summary;
  EXPECT_EQ(std::count(r.saturated.begin(), r.saturated.end(), "dram_bandwidth"), 1);

  // The shape worker/ collect_counters() writes: summary keys win over "raw".
  const nlohmann::json harness = {{"sm_throughput_pct", 30.0}, {"dram_throughput_pct", 25.0}, {"tensor_pipe_pct", 20.0},
                                  {"l2_hit_rate_pct", 95.0}, {"achieved_occupancy_pct", 45.0}, {"smem_bank_conflicts", nullptr},
                                  {"raw", {{"sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active", 99.0}}},
                                  {"raw_errors", {{"x", "not available"}}}, {"passes", 3}};
  r = read_bottleneck(harness);
  EXPECT_NE(r.summary.find("latency-bound"), std::string::npos) << r.summary;
  EXPECT_EQ(r.figures["tensor_pipe_pct"], 20.0);
  EXPECT_EQ(r.saturated, std::vector<std::string>{"l2_locality"});

  EXPECT_EQ(read_bottleneck(nlohmann::json::object()).summary, "no counters measured");
  EXPECT_NE(read_bottleneck({{"error", "profiling restricted"}}).summary.find("profiling restricted"), std::string::npos);
  EXPECT_EQ(unmasked_strategies(nlohmann::json::object()).size(), strategies().size());
  for (const auto& s : strategies()) {
    EXPECT_FALSE(s.target_resource.empty());
    EXPECT_TRUE(s.resource_class == "tensor" || s.resource_class == "memory" || s.resource_class == "latency" ||
                s.resource_class == "none") << s.name;
  }
}

}  // namespace
}  // namespace tessera::agent
