// `tessera tile` from the outside: exit codes, one-line errors, JSON output.
// Skips when the tessera binary has not been built.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "tests/testing.hpp"
#include "tile/config.hpp"

namespace tessera::tile {
namespace {

struct CliRun {
  int code = -1;
  std::string out;  // stdout and stderr
};

CliRun tessera(const std::string& args) {
  CliRun r;
  const std::string cmd = std::string(TESSERA_BINARY) + " " + args + " 2>&1";
  if (FILE* f = popen(cmd.c_str(), "r")) {
    char buf[4096];
    while (std::size_t n = fread(buf, 1, sizeof buf, f)) r.out.append(buf, n);
    const int status = pclose(f);
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  return r;
}

#define TESSERA_REQUIRE_BINARY()                                                            \
  do {                                                                                      \
    if (!std::filesystem::exists(TESSERA_BINARY)) GTEST_SKIP() << TESSERA_BINARY " not built"; \
  } while (0)

TEST(TileCli, ListPrintsLegalConfigsAsJson) {
  TESSERA_REQUIRE_BINARY();
  const CliRun r = tessera("tile list --shape 100x5000x3000 --layout NN --limit 7 --json");
  ASSERT_EQ(r.code, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j.size(), 7u);
  for (const auto& e : j) EXPECT_EQ(name(from_json(e.at("config"))), e.at("name").get<std::string>());
}

TEST(TileCli, ListModelPrintsTheCostModelsOrderWithPredictions) {
  TESSERA_REQUIRE_BINARY();
  const CliRun r = tessera("tile list --model --shape 1x4096x14336 --limit 5 --json");
  ASSERT_EQ(r.code, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j.size(), 5u);
  const double first = j[0].at("prediction").at("time_us").get<double>();
  for (const auto& e : j) {
    EXPECT_EQ(name(from_json(e.at("config"))), e.at("name").get<std::string>());
    EXPECT_GE(e.at("prediction").at("time_us").get<double>(), first) << "the fastest predicted first";
  }
  EXPECT_TRUE(from_json(j[0].at("config")).swap_ab) << "decode: swap-AB first";
  EXPECT_EQ(j[0].at("prediction").at("bound").get<std::string>(), "memory");
}

// By default list ranks as tune would on this machine's GPU (--device-kind
// auto); without a GPU, with the pooled model. --device-kind names another.
TEST(TileCli, ListModelRanksForTheLocalGpuOrWithThePooledModel) {
  TESSERA_REQUIRE_BINARY();
  const std::string list = "tile list --model --shape 4096x4096x4096 --limit 3";
  const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
  const std::optional<std::string> saved = visible ? std::optional<std::string>(visible) : std::nullopt;
  ::setenv("CUDA_VISIBLE_DEVICES", "", 1);  // no GPU, on a GPU machine too
  const CliRun none = tessera(list + " --json");
  if (saved) ::setenv("CUDA_VISIBLE_DEVICES", saved->c_str(), 1); else ::unsetenv("CUDA_VISIBLE_DEVICES");
  ASSERT_EQ(none.code, 0) << none.out;
  const CliRun pooled = tessera(list + " --device-kind all --json");
  ASSERT_EQ(pooled.code, 0) << pooled.out;
  EXPECT_EQ(nlohmann::json::parse(none.out), nlohmann::json::parse(pooled.out)) << "no GPU: the pooled model's order";
  const CliRun h200 = tessera(list + " --device-kind h200");
  ASSERT_EQ(h200.code, 0) << h200.out;
  if (h200.out.find("learned") == std::string::npos) GTEST_SKIP() << "no learned model in this build: " << h200.out;
  EXPECT_NE(h200.out.find("learned h200"), std::string::npos) << "the shipped H200 model: " << h200.out;
  EXPECT_NE(tessera(list + " --device-kind h100").out.find("learned all"), std::string::npos)
      << "a kind without a model of its own takes the pooled one";
}

TEST(TileCli, EmitPrintsSourceForANameOrJson) {
  TESSERA_REQUIRE_BINARY();
  CliRun r = tessera("tile emit w128x256x64_g2x1_s4p4_pa_d1_sw_ed_r8_k1s_t_c1x1_none --shape 1x4096x4096");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("tessera_hgemm"), std::string::npos);
  r = tessera("tile emit '{\"backend\":\"mma_sync\",\"split_k\":2}' --shape 100x5000x3001 --epilogue bias");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("TESSERA_EPILOGUE_BIAS"), std::string::npos);
}

TEST(TileCli, CheckSaysWhyAndExitsNonZero) {
  TESSERA_REQUIRE_BINARY();
  CliRun r = tessera("tile check w128x256x64_g2x1_s4p4_pa_d1_sw_ed_r8_k1s_t_c1x1_none --shape 100x5000x3001");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.out.find("K % 8"), std::string::npos) << r.out;
  r = tessera("tile check w128x256x64_g2x1_s4p4_pa_d1_sw_ed_r8_k1s_t_c1x1_none --shape 4096x4096x4096 --arch sm_80");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.out.find("sm_90a"), std::string::npos) << r.out;
}

TEST(TileCli, CheckPlacesALegalConfigInTheCostModelsOrder) {
  TESSERA_REQUIRE_BINARY();
  // The model's own first pick for the shape is its #1.
  CliRun r = tessera("tile list --shape 192x4096x7168 --model --json --limit 1");
  ASSERT_EQ(r.code, 0) << r.out;
  const auto first = nlohmann::json::parse(r.out).at(0);
  const std::string name = first.at("name");
  r = tessera("tile check " + name + " --shape 192x4096x7168 --json");
  ASSERT_EQ(r.code, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("model").at("rank"), 1);
  EXPECT_TRUE(j.at("model").at("shortlisted"));
  EXPECT_DOUBLE_EQ(j.at("model").at("prediction").at("time_us").get<double>(),
                   first.at("prediction").at("time_us").get<double>());
  // A legal config outside the shortlist (the H200 tune's winner there, found by refining) gets the
  // place its prediction would give it.
  r = tessera("tile check w128x64x64_g2x1_s8p8_pa_d1_sw_ed_r0_k1s_t_c1x1_swapab_none --shape 192x4096x7168");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("µs predicted"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("it would be #"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("a refine or search move can reach it"), std::string::npos) << r.out;
}

TEST(TileCli, CheckSaysWhenNoRefineOrSearchMoveReachesAConfig) {
  TESSERA_REQUIRE_BINARY();
  // Split 3 is off the space's split-K axis (1, 2, 4, ...): neighbours and crossover keep to the
  // axes, so a tune or a search reaches it only from a config that has it. The shortlist has it at
  // four stages (the split that fits two CTAs an SM); at five stages it is not shortlisted.
  CliRun r = tessera("tile check w64x104x64_g1x1_s5p5_pa_d1_sw_es_r8_k3a_t_c1x1_swapab_none --shape 100x5120x32768 --json");
  ASSERT_EQ(r.code, 0) << r.out;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_FALSE(j.at("model").at("shortlisted"));
  EXPECT_EQ(j.at("model").at("off_axes"), nlohmann::json::array({"split_k 3"}));
  r = tessera("tile check w64x104x64_g1x1_s5p5_pa_d1_sw_es_r8_k3a_t_c1x1_swapab_none --shape 100x5120x32768");
  EXPECT_NE(r.out.find("off the search space's axes (split_k 3)"), std::string::npos) << r.out;
  // The same tile at split 2 lies on the axes.
  r = tessera("tile check w64x104x64_g1x1_s5p5_pa_d1_sw_es_r8_k2a_t_c1x1_swapab_none --shape 100x5120x32768 --json");
  ASSERT_EQ(r.code, 0) << r.out;
  j = nlohmann::json::parse(r.out);
  EXPECT_TRUE(j.at("model").at("off_axes").empty()) << r.out;
  // Ten stages (the shortlist's deepest ring; the axis stops at 8) and split 3 together.
  r = tessera("tile check w64x104x64_g1x1_s10p10_pa_d1_sw_es_r8_k3a_t_c1x1_swapab_none --shape 100x5120x32768 --json");
  ASSERT_EQ(r.code, 0) << r.out;
  j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("model").at("off_axes"), nlohmann::json::array({"stages 10", "split_k 3"})) << r.out;
}

// `tessera eval --rows`: the rows file is checked before any work; nothing
// timed (compile-only) appends nothing and says so.
TEST(TileCli, EvalRowsFileIsCheckedBeforeAnyWork) {
  TESSERA_REQUIRE_BINARY();
  const auto dir = std::filesystem::temp_directory_path() / "tessera_eval_rows_cli";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const auto kernel = dir / "k.cu";
  CliRun r = tessera("tile emit w64x104x64_g1x1_s4p4_pa_d1_sw_es_r8_k3a_t_c1x1_swapab_none --shape 100x5120x32768 > " +
                     kernel.string());
  ASSERT_EQ(r.code, 0) << r.out;
  r = tessera("eval " + kernel.string() + " --shape 100x5120x32768 --rows " + (dir / "rows.txt").string());
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("ends in .jsonl"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find('\n'), r.out.size() - 1) << "not one line: " << r.out;
  r = tessera("eval " + kernel.string() + " --shape 100x5120x32768 --rows " + (dir / "no" / "such" / "rows.jsonl").string());
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("cannot be written"), std::string::npos) << r.out;
  const auto rows = dir / "rows.jsonl";
  r = tessera("eval " + kernel.string() + " --shape 100x5120x32768 --compile-only --rows " + rows.string());
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("0 training rows appended"), std::string::npos) << r.out;
  EXPECT_TRUE(std::filesystem::exists(rows));
  EXPECT_EQ(std::filesystem::file_size(rows), 0u);
}

// On a GPU, each timed kernel that is tile emit's unedited output for the task
// becomes one row (its config, the task, the device, its cold time); an edited
// copy is timed but filed under no config.
TEST(TileCli, EvalAppendsARowForEachTimedTileKernel) {
  TESSERA_REQUIRE_BINARY();
  TESSERA_REQUIRE_GPU();
  const auto dir = std::filesystem::temp_directory_path() / "tessera_eval_rows_gpu";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string config = "w128x128x64_g2x1_s4p4_pa_d1_sw_ed_r8_k1s_t_c1x1_none";
  const auto kernel = dir / "k.cu", edited = dir / "edited.cu", rows = dir / "rows.jsonl";
  CliRun r = tessera("tile emit " + config + " --shape 512x512x512 > " + kernel.string());
  ASSERT_EQ(r.code, 0) << r.out;
  std::filesystem::copy_file(kernel, edited);
  std::ofstream(edited, std::ios::app) << "// edited\n";
  r = tessera("eval " + kernel.string() + " " + edited.string() + " --shape 512x512x512 --no-counters --rows " +
              rows.string());
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("1 training rows appended"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("1 timed kernels have no row"), std::string::npos) << r.out;
  std::ifstream in(rows);
  std::string line;
  ASSERT_TRUE(std::getline(in, line));
  const auto j = nlohmann::json::parse(line);
  EXPECT_EQ(j.at("config"), config);
  EXPECT_EQ(j.at("task").at("m"), 512);
  EXPECT_GT(j.at("cold_us").get<double>(), 0);
  EXPECT_FALSE(j.at("device_kind").get<std::string>().empty());
  EXPECT_GT(j.at("limits").at("sm_count").get<int>(), 0);
  EXPECT_FALSE(std::getline(in, line)) << "a second row: " << line;
}

TEST(TileCli, BadInputIsOneLineAndExitCode2) {
  TESSERA_REQUIRE_BINARY();
  for (const char* args : {"tile check '{\"bm\":128,\"nope\":1}' --shape 64x64x64",
                           "tile emit not_a_config --shape 64x64x64", "tile list --shape 64x64", "tile list --backend tpu",
                           "tile emit '{\"bm\":48}' --shape 64x64x64"}) {
    const CliRun r = tessera(args);
    EXPECT_EQ(r.code, 2) << args << "\n" << r.out;
    EXPECT_EQ(r.out.find('\n'), r.out.size() - 1) << "not one line: " << r.out;
    EXPECT_EQ(r.out.rfind("error: ", 0), 0u) << r.out;
  }
}

}  // namespace
}  // namespace tessera::tile
