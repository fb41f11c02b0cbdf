// LlmProposer end to end against the local server, and ReplayProposer.
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "agent/gpu_limits.hpp"
#include "agent/llm_proposer.hpp"
#include "agent/proposers.hpp"
#include "tile/cost_model.hpp"
#include "core/error.hpp"
#include "tests/agent/test_server.hpp"

namespace tessera::agent {
namespace {

const std::string kParentSource =
    "#include \"tessera_abi.cuh\"\n"
    "extern \"C\" __global__ void tessera_hgemm(const __grid_constant__ TesseraGemmParams p) {\n"
    "  float acc = 0.f;\n"
    "}\n";

ProposalContext context_with_parent() {
  ProposalContext c;
  c.task.m = c.task.n = c.task.k = 1024;
  c.strategy = "tiling";
  c.seed = 7;
  c.temperature = 0.4;
  Evaluated parent;
  parent.candidate.name = "seed_kernel";
  parent.candidate.source = kParentSource;
  parent.result.status = Status::ok;
  c.parent = parent;
  return c;
}

std::unique_ptr<Proposer> proposer_for(const testing::TestServer& server, int max_attempts = 1) {
  EndpointConfig e;
  e.base_url = server.base_url();
  e.model = "coder";
  e.retry.max_attempts = max_attempts;
  LlmProposerOptions o;
  o.endpoints = {e};
  return make_llm_proposer(o);
}

TEST(LlmProposer, DiffReplyBecomesACandidateWithMessagesAndUsage) {
  testing::TestServer server([](const testing::TestRequest&, int) {
    return testing::respond(200, testing::openai_reply("Use a const.\n<<<<<<< SEARCH\n  float acc = 0.f;\n=======\n  float acc = 0.0f;\n>>>>>>> REPLACE\n", 900, 40));
  });
  const Proposal p = proposer_for(server)->propose(context_with_parent());
  ASSERT_TRUE(p.ok) << p.error;
  EXPECT_EQ(p.proposer, "llm");
  EXPECT_EQ(p.action_kind, "diff");
  EXPECT_NE(p.candidate.source.find("float acc = 0.0f;"), std::string::npos);
  EXPECT_EQ(p.candidate.kind, CandidateKind::device_only);
  EXPECT_EQ(p.candidate.meta["parent"], "seed_kernel");
  ASSERT_EQ(p.messages.size(), 3u);
  EXPECT_EQ(p.messages[2].role, "assistant");
  EXPECT_EQ(p.usage.prompt_tokens, 900);
  EXPECT_EQ(p.proposer_info["strategy"], "tiling");
  const auto body = nlohmann::json::parse(server.requests()[0].body);
  EXPECT_DOUBLE_EQ(body["temperature"].get<double>(), 0.4);
  EXPECT_EQ(body["seed"], 7);
  EXPECT_NE(body["messages"][1]["content"].get<std::string>().find("float acc = 0.f;"), std::string::npos);
}

TEST(LlmProposer, FullSourceReplyForATranslationUnit) {
  testing::TestServer server([](const testing::TestRequest&, int) {
    return testing::respond(200, testing::openai_reply("```cuda\n#include \"tessera_abi.cuh\"\nextern \"C\" int tessera_launch(const TesseraGemmParams* p, cudaStream_t s) { return 0; }\n```"));
  });
  auto c = context_with_parent();
  c.parent.reset();
  const Proposal p = proposer_for(server)->propose(c);
  ASSERT_TRUE(p.ok) << p.error;
  EXPECT_EQ(p.action_kind, "full_source");
  EXPECT_EQ(p.candidate.kind, CandidateKind::translation_unit);
}

TEST(LlmProposer, FailuresAreDataNotExceptions) {
  testing::TestServer prose([](const testing::TestRequest&, int) { return testing::respond(200, testing::openai_reply("No code today.")); });
  Proposal p = proposer_for(prose)->propose(context_with_parent());
  EXPECT_FALSE(p.ok);
  EXPECT_NE(p.error.find("no fenced code block"), std::string::npos) << p.error;
  EXPECT_EQ(p.messages.size(), 3u);  // the exchange is still recorded

  testing::TestServer no_abi([](const testing::TestRequest&, int) { return testing::respond(200, testing::openai_reply("```cuda\n__global__ void k() {}\n```")); });
  p = proposer_for(no_abi)->propose(context_with_parent());
  EXPECT_FALSE(p.ok);
  EXPECT_NE(p.error.find("breaks the ABI"), std::string::npos) << p.error;

  testing::TestServer down([](const testing::TestRequest&, int) { return testing::respond(503, "{}"); });
  p = proposer_for(down)->propose(context_with_parent());
  EXPECT_FALSE(p.ok);
  EXPECT_EQ(p.proposer_info["error_kind"], "server");

  auto c = context_with_parent();
  c.strategy = "no_such_arm";
  p = proposer_for(down)->propose(c);
  EXPECT_FALSE(p.ok);
  EXPECT_NE(p.error.find("unknown strategy"), std::string::npos);
  c = context_with_parent();
  c.model = "no_such_model";
  p = proposer_for(down)->propose(c);
  EXPECT_FALSE(p.ok);
  EXPECT_NE(p.error.find("unknown model arm"), std::string::npos);
}

std::filesystem::path write_jsonl(const std::string& name, const std::vector<std::string>& lines) {
  const auto path = std::filesystem::temp_directory_path() / ("tessera_replay_" + name + "_" + std::to_string(::getpid()) + ".jsonl");
  std::ofstream out(path);
  for (const auto& l : lines) out << l << "\n";
  return path;
}

TEST(ReplayProposer, ReplaysRecordsInOrderAcrossTheAcceptedForms) {
  const nlohmann::json search_form = {{"step", 0},
                                      {"action", {{"kind", "full_source"}, {"content", "ignored: candidate.source wins"}}},
                                      {"candidate", {{"kind", "device_only"}, {"name", "cand_a"}, {"source", kParentSource}}},
                                      {"messages", {{{"role", "user"}, {"content", "q"}}, {{"role", "assistant"}, {"content", "a"}}}}};
  const nlohmann::json top_level = {{"action_kind", "diff"},
                                    {"action", "<<<<<<< SEARCH\n  float acc = 0.f;\n=======\n  float acc = 1.f;\n>>>>>>> REPLACE\n"}};
  const nlohmann::json tu = {{"action", {{"kind", "full_source"}, {"content", "extern \"C\" int tessera_launch(const TesseraGemmParams* p, cudaStream_t s);"}}}};
  const auto path = write_jsonl("ok", {R"({"run": "header only"})", search_form.dump(), "", top_level.dump(), tu.dump(),
                                       R"({"action_kind": "diff", "action": "<<<<<<< SEARCH\nnot there\n=======\nx\n>>>>>>> REPLACE\n"})",
                                       R"({"truncated": )"});
  auto replay = make_replay_proposer(path);
  const auto c = context_with_parent();
  Proposal p = replay->propose(c);
  ASSERT_TRUE(p.ok) << p.error;
  EXPECT_EQ(p.candidate.name, "cand_a");
  EXPECT_EQ(p.candidate.source, kParentSource);
  EXPECT_EQ(p.action_kind, "replay");
  EXPECT_EQ(p.proposer_info["original_action_kind"], "full_source");
  EXPECT_EQ(p.messages.size(), 2u);

  p = replay->propose(c);
  ASSERT_TRUE(p.ok) << p.error;
  EXPECT_NE(p.candidate.source.find("float acc = 1.f;"), std::string::npos);
  EXPECT_EQ(p.proposer_info["line"], 4);

  p = replay->propose(c);
  ASSERT_TRUE(p.ok) << p.error;
  EXPECT_EQ(p.candidate.kind, CandidateKind::translation_unit);

  p = replay->propose(c);
  EXPECT_FALSE(p.ok);
  EXPECT_NE(p.error.find("does not match"), std::string::npos) << p.error;

  p = replay->propose(c);
  EXPECT_FALSE(p.ok);
  EXPECT_NE(p.error.find("replay exhausted: all 4 records"), std::string::npos) << p.error;
  std::filesystem::remove(path);
}

// A search record for `step` whose candidate is the parent with acc set to `init`.
nlohmann::json step_record(long long step, const std::string& init) {
  std::string src = kParentSource;
  src.replace(src.find("0.f;"), 3, init);
  return {{"step", step},
          {"action", {{"kind", "full_source"}, {"content", src}}},
          {"candidate", {{"kind", "device_only"}, {"name", "step_" + std::to_string(step)}, {"source", src}}}};
}

ProposalContext at_step(long long step) {
  ProposalContext c = context_with_parent();
  c.step = step;
  return c;
}

// Inside a search, a step is served the record of that step whatever the order
// of the calls, however often it is asked (novelty retries, a resumed run), and
// without moving the file-order cursor used outside a search.
TEST(ReplayProposer, ServesTheRecordOfTheStepBeingProposed) {
  const nlohmann::json failed = {{"step", 2}, {"proposal_ok", false}, {"action", {{"kind", ""}, {"content", ""}}}};
  const auto path = write_jsonl("steps", {R"({"run": "header only"})", step_record(0, "1.f").dump(),
                                          step_record(1, "2.f").dump(), failed.dump(), step_record(3, "3.f").dump(),
                                          step_record(1, "9.f").dump()});
  auto replay = make_replay_proposer(path);
  Proposal p = replay->propose(at_step(3));
  ASSERT_TRUE(p.ok) << p.error;
  EXPECT_EQ(p.candidate.name, "step_3");
  EXPECT_EQ(p.proposer_info["step"], 3);
  for (int again = 0; again < 2; ++again) {
    p = replay->propose(at_step(1));
    ASSERT_TRUE(p.ok) << p.error;
    EXPECT_NE(p.candidate.source.find("float acc = 2.f;"), std::string::npos) << "the first record of step 1 wins";
  }
  p = replay->propose(at_step(0));
  ASSERT_TRUE(p.ok) << p.error;
  EXPECT_NE(p.candidate.source.find("float acc = 1.f;"), std::string::npos);
  for (long long missing : {2, 4}) {
    p = replay->propose(at_step(missing));
    EXPECT_FALSE(p.ok);
    EXPECT_EQ(p.proposer, "replay");
    EXPECT_NE(p.error.find("no record for step " + std::to_string(missing)), std::string::npos) << p.error;
  }
  // Outside a search (no step) the records come in file order, from the first.
  p = replay->propose(context_with_parent());
  ASSERT_TRUE(p.ok) << p.error;
  EXPECT_EQ(p.candidate.name, "step_0");
  std::filesystem::remove(path);
}

TEST(ReplayProposer, RecordsWithoutAStepServeTheirPositionAmongReplayableRecords) {
  nlohmann::json a = step_record(0, "1.f"), b = step_record(0, "2.f");
  a.erase("step");
  b.erase("step");
  const auto path = write_jsonl("nostep", {R"({"run": "header only"})", a.dump(), R"({"totals": {}})", b.dump()});
  auto replay = make_replay_proposer(path);
  Proposal p = replay->propose(at_step(1));
  ASSERT_TRUE(p.ok) << p.error;
  EXPECT_NE(p.candidate.source.find("float acc = 2.f;"), std::string::npos);
  p = replay->propose(at_step(0));
  ASSERT_TRUE(p.ok) << p.error;
  EXPECT_NE(p.candidate.source.find("float acc = 1.f;"), std::string::npos);
  p = replay->propose(at_step(2));
  EXPECT_FALSE(p.ok);
  EXPECT_NE(p.error.find("no record for step 2"), std::string::npos) << p.error;
  std::filesystem::remove(path);
}

TEST(ReplayProposer, BadFilesAreClearErrors) {
  EXPECT_THROW(make_replay_proposer("/nonexistent/trajectories.jsonl"), Error);
  const auto path = write_jsonl("empty", {R"({"run": "x"})"});
  try {
    make_replay_proposer(path);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no replayable records"), std::string::npos);
  }
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace tessera::agent

namespace tessera::agent {
namespace {

// What an H200 reports (peak and clock: what the harness measured on one).
DeviceSummary h200() {
  DeviceSummary d;
  d.name = "NVIDIA H200";
  d.arch = "sm_90a";
  d.sm_count = 132;
  d.smem_per_block_optin = 232448;
  d.l2_bytes = 60LL << 20;
  d.peak_tflops = 812.5;
  d.sm_clock_mhz = 1980;
  return d;
}

TEST(GpuInfo, TakesWhatTheDeviceReportsAndKeepsDefaultsForWhatItLeavesUnknown) {
  const GpuInfo g = gpu_info(h200());
  EXPECT_EQ(g.name, "NVIDIA H200");
  EXPECT_EQ(g.sm_count, 132);
  EXPECT_EQ(g.smem_per_block_optin, 232448);
  EXPECT_EQ(g.l2_bytes, 60LL << 20);
  EXPECT_DOUBLE_EQ(g.peak_tflops, 812.5);
  EXPECT_EQ(g.sm_clock_mhz, 1980);

  const GpuInfo unknown = gpu_info(DeviceSummary{});  // compile-only mode: no GPU
  EXPECT_EQ(unknown.name, GpuInfo{}.name);
  EXPECT_EQ(unknown.arch, GpuInfo{}.arch);
  EXPECT_EQ(unknown.sm_count, 0);
}

// A proposer ranks tile configs on the device as the tune does: the limits it
// builds from the GpuInfo are tile::with_device's for the same device. They
// were not (no peak, no clock), and on four H200s the search's first eight
// configs matched the tune's on 3 of the 64 LLM shapes.
TEST(GpuInfo, GivesTheTileLimitsTheTuneUses) {
  const DeviceSummary d = h200();
  const tile::Limits tune = tile::with_device(tile::Limits{}, d);
  const tile::Limits mine = tile_limits(gpu_info(d));
  EXPECT_EQ(mine.arch, tune.arch);
  EXPECT_EQ(mine.smem_optin_bytes, tune.smem_optin_bytes);
  EXPECT_EQ(mine.sm_count, tune.sm_count);
  EXPECT_DOUBLE_EQ(mine.peak_tflops, tune.peak_tflops);
  EXPECT_EQ(mine.l2_bytes, tune.l2_bytes);
  EXPECT_EQ(mine.sm_clock_mhz, tune.sm_clock_mhz);
  EXPECT_DOUBLE_EQ(mine.dram_gbps, tune.dram_gbps);
  EXPECT_EQ(mine.smem_per_sm_bytes, tune.smem_per_sm_bytes);
  // And so the same model order.
  const Task t = task_from_shape("257x6144x4096");
  const auto a = tile::rank_configs(t, mine, 8), b = tile::rank_configs(t, tune, 8);
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) EXPECT_EQ(tile::name(a[i].config), tile::name(b[i].config)) << i;
  EXPECT_EQ(tile_limits(GpuInfo{}, "sm_80").arch, "sm_90a") << "GpuInfo's own default arch comes first";
  GpuInfo no_arch;
  no_arch.arch.clear();
  EXPECT_EQ(tile_limits(no_arch, "sm_80").arch, "sm_80");
}

}  // namespace
}  // namespace tessera::agent
