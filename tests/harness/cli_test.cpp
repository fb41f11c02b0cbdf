// The CLI's promise for bad input: one clear line on stderr, a non-zero exit,
// never a crash or a hang.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "tests/testing.hpp"

namespace {

using CliRun = tessera::testing::CommandResult;

CliRun run(const std::string& args) {
  return tessera::testing::run_command("timeout 60 " + std::string(TESSERA_BINARY) + " " + args + " 2>&1");
}

void expect_clear_error(const std::string& args, const std::string& needle) {
  CliRun r = run(args);
  EXPECT_EQ(r.code, 2) << args << "\n" << r.out;
  EXPECT_EQ(r.out.rfind("error: ", 0), 0u) << args << "\n" << r.out;
  EXPECT_NE(r.out.find(needle), std::string::npos) << args << "\n" << r.out;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << "one line only:\n" << r.out;
}

const std::string kExample = std::string(TESSERA_SOURCE_DIR) + "/examples/hgemm_naive.cu";

TEST(Cli, BadInputGetsOneClearLine) {
  expect_clear_error("eval /nonexistent.cu --shape 64x64x64", "file not found");
  expect_clear_error("eval " + kExample + " --shape 64x64", "bad shape");
  expect_clear_error("eval " + kExample + " --shape 0x64x64", "out of range");
  expect_clear_error("eval " + kExample + " --shape 64x64x64 --layout TT", "unsupported layout");
  expect_clear_error("eval " + kExample + " --task '{\"m\":1}'", "missing 'n'");
  expect_clear_error("eval " + kExample + " --task 'not json'", "not valid JSON");
  expect_clear_error("eval " + kExample, "no task");
  expect_clear_error("eval " + std::string(TESSERA_SOURCE_DIR) + "/README.md --shape 64x64x64", "bad kernel ABI");
  expect_clear_error("eval " + kExample + " --shape 64x64x64 --mode turbo", "unknown evaluation mode");
}

// Logs (here the compile cache's warning about a tampered entry) go to
// stderr, so stdout stays the --json record alone.
TEST(Cli, LogsGoToStderrAndStdoutStaysJson) {
  const auto dir = std::filesystem::temp_directory_path() / ("tessera_cli_logs_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string eval = "TESSERA_CACHE_DIR=" + dir.string() + " timeout 60 " + TESSERA_BINARY + " eval " + kExample +
                           " --shape 64x64x64 --compile-only --json";
  ASSERT_EQ(tessera::testing::run_command(eval + " > /dev/null 2>&1").code, 0);
  int tampered = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir)) {
    if (!e.is_regular_file() || e.path().extension() == ".json") continue;
    std::ofstream(e.path(), std::ios::trunc) << "EVIL";
    ++tampered;
  }
  ASSERT_GT(tampered, 0) << "the first run left no artifact in " << dir;
  const auto out = dir / "stdout.txt", err = dir / "stderr.txt";
  ASSERT_EQ(tessera::testing::run_command(eval + " > " + out.string() + " 2> " + err.string()).code, 0);
  std::ifstream o(out), e(err);
  const std::string out_text{std::istreambuf_iterator<char>(o), {}}, err_text{std::istreambuf_iterator<char>(e), {}};
  EXPECT_NE(err_text.find("compile cache"), std::string::npos) << err_text;
  EXPECT_EQ(out_text.find("compile cache"), std::string::npos) << out_text;
  EXPECT_EQ(out_text.rfind("{", 0), 0u) << out_text;
  EXPECT_TRUE(nlohmann::json::parse(out_text, nullptr, false).is_object()) << out_text;  // no exceptions: discarded if bad
  std::filesystem::remove_all(dir);
}

TEST(Cli, EveryCommandHasHelp) {
  for (const char* cmd : {"", "doctor", "eval", "baseline", "tile", "agent", "bench", "bench harness", "bench floor",
                          "bench suite", "bench compare", "bench report"}) {
    CliRun r = run(std::string(cmd) + " --help");
    EXPECT_EQ(r.code, 0) << cmd << "\n" << r.out;
    EXPECT_NE(r.out.find("Usage"), std::string::npos) << cmd;
  }
}

// Without a GPU: one clear line and exit 2. With one: a row per floor kernel,
// each with a measured (non-zero) cold median.
TEST(Cli, BenchFloorMeasuresOrSaysWhyNot) {
  if (!tessera::testing::gpu_unavailable_reason().empty()) {
    expect_clear_error("bench floor", "no CUDA GPU");
    return;
  }
  CliRun r = run("bench floor");
  ASSERT_EQ(r.code, 0) << r.out;
  std::istringstream lines(r.out);
  int rows = 0;
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("empty", 0) != 0 && line.rfind("one DRAM", 0) != 0) continue;
    ++rows;
    std::istringstream cols(line.substr(48));  // the name column is 48 wide
    double cold_us = 0;
    cols >> cold_us;
    EXPECT_GT(cold_us, 0.0) << line;
  }
  EXPECT_EQ(rows, 5) << r.out;
}

TEST(Cli, CompileOnlyEvalSaysItDidNotVerify) {
  CliRun r = run("eval " + kExample + " --shape 64x64x64 --mode compile_only");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("not verified"), std::string::npos) << r.out;
  CliRun flag = run("eval " + kExample + " --shape 64x64x64 --compile-only");  // the flag tile eval and search take
  EXPECT_EQ(flag.code, 0) << flag.out;
  EXPECT_NE(flag.out.find("not verified"), std::string::npos) << flag.out;
}

// tile tune over a task file writes its Markdown table, one row per task (a
// fused epilogue named beside its shape), and says the configs were compiled
// but not timed, the model's first pick included (not "failed").
TEST(Cli, TileTuneOverATaskFileWritesTheReport) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / ("tessera_tune_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const auto tasks = dir / "tasks.json";
  const auto report = dir / "report.md";
  std::ofstream(tasks) << R"({"tasks": [{"m": 128, "n": 64, "k": 128}, {"m": 64, "n": 256, "k": 512},
                                     {"m": 128, "n": 64, "k": 128, "epilogue": "bias_gelu"}]})";
  CliRun r = run("tile tune --tasks " + tasks.string() + " --budget 2 --compile-only --report " + report.string());
  EXPECT_EQ(r.code, 0) << r.out;
  std::ifstream in(report);
  const std::string md((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(md.find("| 128x64x128 |"), std::string::npos) << md;
  EXPECT_NE(md.find("| 64x256x512 |"), std::string::npos) << md;
  EXPECT_NE(md.find("| 128x64x128 bias_gelu |"), std::string::npos) << md;
  EXPECT_NE(md.find("compile-only: not timed"), std::string::npos) << md;
  EXPECT_NE(md.find(" / not timed |"), std::string::npos) << md;
  EXPECT_EQ(md.find(" / failed"), std::string::npos) << md;
  EXPECT_NE(md.find("No task was timed"), std::string::npos) << md;
  // Rows of what was timed: here nothing, and it says so.
  const CliRun rows = run("tile tune --shape 128x64x128 --budget 2 --compile-only --rows " + (dir / "r.jsonl").string());
  EXPECT_EQ(rows.code, 0) << rows.out;
  EXPECT_NE(rows.out.find("0 training rows appended to"), std::string::npos) << rows.out;
  EXPECT_NE(rows.out.find("(nothing was timed)"), std::string::npos) << rows.out;
  // An unwritable report path (its parent is a file) fails before any tuning,
  // with one clear line.
  const std::string bad = (tasks / "r.md").string();
  expect_clear_error("tile tune --tasks " + tasks.string() + " --budget 2 --compile-only --report " + bad, bad);
  expect_clear_error("tile tune --tasks " + tasks.string() + " --budget 2 --compile-only --confirm 0", "--confirm");
  expect_clear_error("tile tune --tasks " + tasks.string() + " --budget-evals 0 --compile-only", "--budget-evals must be >= 1");
  expect_clear_error("tile tune --tasks " + tasks.string() + " --budget 2 --compile-only --rows " + (dir / "r.txt").string(),
                     "a rows file ends in .jsonl");
  expect_clear_error("tile tune --tasks " + tasks.string() + " --budget 2 --compile-only --rows " + bad + "/r.jsonl",
                     "cannot be written");
  expect_clear_error("tile tune --tasks " + tasks.string() + " --budget 2 --compile-only --backend tensor_cores",
                     "--backend 'tensor_cores'");
  std::filesystem::remove_all(dir);
}

// The budget is spelled as `tessera search` spells it (--budget-evals), and the older --budget is the same option.
TEST(Cli, TileTuneTakesTheSearchsBudgetSpelling) {
  for (const std::string spelling : {"--budget-evals", "--budget"}) {
    CliRun r = run("tile tune --shape 128x64x128 " + spelling + " 3 --compile-only --json");
    ASSERT_EQ(r.code, 0) << r.out;
    const auto j = nlohmann::json::parse(r.out.substr(r.out.find('{')));
    EXPECT_EQ(j.at("tasks").at(0).at("evaluated").get<int>(), 3) << spelling << ": " << r.out;
  }
}

}  // namespace
