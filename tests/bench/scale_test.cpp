// `tessera bench scale`: the figures' arithmetic and JSON round trip, the
// stage breakdown, NVML missing reported rather than fatal, and whole runs
// of both paths in compile-only mode (so CI runs them end to end), through
// the library and through the command line with its errors for bad options.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "bench/detail/gpu_sampler.hpp"
#include "bench/detail/stage_samples.hpp"
#include "bench/scale.hpp"
#include "core/fs.hpp"
#include "harness/nvml.hpp"
#include "tests/bench/synthetic.hpp"
#include "tests/testing.hpp"

namespace tessera::bench {
namespace {

namespace fs = std::filesystem;

constexpr const char* kNoNvml = "libtessera-test-no-such-nvml.so.1";

bool has_stage(const ScalePoint& p, const std::string& stage) {
  return std::any_of(p.stages.begin(), p.stages.end(), [&](const StageFigures& s) { return s.stage == stage && s.n > 0; });
}

ScalePoint point(const std::string& path, int gpus, double per_min) {
  ScalePoint p;
  p.path = path;
  p.shape = "2048x2048x2048";
  p.gpus = gpus;
  p.evals_per_min = per_min;
  return p;
}

TEST(ScaleFigures, ScalingIsAgainstTheSmallestPointOfTheSamePathAndShape) {
  ScaleReport r;
  r.points = {point("pool", 1, 100), point("pool", 2, 190), point("pool", 4, 360), point("serve", 2, 200),
              point("serve", 4, 300)};
  fill_scaling(r);
  EXPECT_DOUBLE_EQ(r.points[0].scaling, 1.0);
  EXPECT_DOUBLE_EQ(r.points[1].linear_fraction, 0.95);
  EXPECT_DOUBLE_EQ(r.points[2].scaling, 3.6);
  EXPECT_DOUBLE_EQ(r.points[2].linear_fraction, 0.9);
  // No 1-GPU serve point: 2 GPUs is the base, 4 is twice its GPUs.
  EXPECT_DOUBLE_EQ(r.points[4].scaling, 1.5);
  EXPECT_DOUBLE_EQ(r.points[4].linear_fraction, 0.75);
}

TEST(ScaleFigures, ReportRoundTripsThroughJson) {
  ScaleReport r;
  r.mode = "full";
  r.nvml = "available";
  ScalePoint p = point("serve", 2, 250);
  p.statuses = {{"ok", 63}, {"infra_error", 1}};
  p.stages = {{"queue", 64, 1.5, 2.0, 3.0}};
  GpuFigures g;
  g.device = 1;
  g.samples = 40;
  g.sm_clock_mhz = 1755;
  g.throttle = {{"sw_power_cap", 0.25}};
  g.busy = 0.93;
  p.gpu = {g};
  r.points = {p};
  const nlohmann::json j = r;
  EXPECT_EQ(nlohmann::json(j.get<ScaleReport>()), j);
  EXPECT_EQ(j.at("points").at(0).at("gpu").at(0).at("throttle").at("sw_power_cap"), 0.25);
}

TEST(ScaleStages, RoundTripIsTheSandboxWallLessCompileAndTheWorkersPhases) {
  EvalResult r;
  r.wall_ms = 100;
  r.phase_ms = {{"queue", 40}, {"compile", 10}, {"setup", 5}, {"verify", 30}, {"timing", 45}};
  r.cold.status = "measured";
  r.cold.samples = 120;
  r.cold.discarded_throttled = 6;
  r.cold.converged = true;
  r.cold.rel_spread = 0.01;
  detail::StageSamples s;
  s.add_result(r);
  EvalResult failed;  // no cold timing: not in the cold figures
  failed.wall_ms = 5;
  s.add_result(failed);
  const ColdTimingFigures cold = s.cold();
  EXPECT_EQ(cold.timed, 1);
  EXPECT_EQ(cold.samples, 120);
  EXPECT_EQ(cold.discarded_throttled, 6);
  EXPECT_EQ(cold.converged, 1.0);
  const auto figures = s.figures();
  auto at = [&](const std::string& stage) {
    const auto it = std::find_if(figures.begin(), figures.end(), [&](const StageFigures& f) { return f.stage == stage; });
    return it == figures.end() ? -1.0 : it->p50_ms;
  };
  EXPECT_EQ(at("round_trip"), 10) << "the queue is the pool's, outside the sandbox's wall time";
  EXPECT_EQ(at("queue"), 40);
  EXPECT_EQ(at("wall"), 100) << "the upper median of 5 and 100";
  EXPECT_EQ(at("verify"), 30);
}

TEST(ScaleStages, AServeRecordAddsTheServicesStagesAndTheClients) {
  EvalResult r;
  r.task = task_from_shape("256x256x256");
  r.wall_ms = 20;
  r.phase_ms = {{"compile", 1}};
  const nlohmann::json rec = {{"status", "ok"},
                              {"result", r},
                              {"latency_ms", {{"queue", 3.0}, {"compile_ahead", 200.0}, {"total", 230.0}}}};
  detail::StageSamples s;
  s.add_record(rec, 240);
  s.add_record({{"error", {{"type", "deadline_exceeded"}, {"message", "late"}}}}, 9);
  std::set<std::string> names;
  for (const auto& f : s.figures()) names.insert(f.stage);
  for (const char* stage : {"client", "total", "serve_queue", "compile_ahead", "compile", "round_trip", "wall"})
    EXPECT_TRUE(names.count(stage)) << stage;
}

TEST(ScaleSampler, WithoutNvmlItTakesNoReadingsAndSaysWhy) {
  detail::GpuSampler sampler({0, 1}, 0.01, kNoNvml);
  EXPECT_NE(sampler.problem().find("NVML unavailable"), std::string::npos) << sampler.problem();
  const auto gpus = sampler.finish();
  ASSERT_EQ(gpus.size(), 2u);
  for (const auto& g : gpus) {
    EXPECT_EQ(g.samples, 0);
    EXPECT_NE(g.problem.find(kNoNvml), std::string::npos) << g.problem;
  }
}

TEST(ScaleSampler, ThrottleReasonsAreSharesOfTheReadings) {
  std::vector<NvmlReading> readings(4);
  for (auto& r : readings) {
    r.reasons_known = true;
    r.sm_clock_mhz = 1980;
  }
  readings[0].reasons = 0x4;        // sw_power_cap
  readings[1].reasons = 0x4 | 0x8;  // and hw_slowdown
  readings[3].sm_clock_mhz = 1500;
  const GpuFigures g = detail::summarise(0, "GPU", readings);
  EXPECT_EQ(g.samples, 4);
  EXPECT_DOUBLE_EQ(g.throttle.at("sw_power_cap"), 0.5);
  EXPECT_DOUBLE_EQ(g.throttle.at("hw_slowdown"), 0.25);
  EXPECT_DOUBLE_EQ(g.sm_clock_min_mhz, 1500);
  EXPECT_DOUBLE_EQ(g.sm_clock_mhz, (3 * 1980 + 1500) / 4.0);
  EXPECT_EQ(throttle_reason_names(0x1 | 0x40), (std::vector<std::string>{"gpu_idle", "hw_thermal"}));
}

TEST(ScaleOptionsCheck, OptionsNoRunCanSatisfyAreBadInput) {
  ScaleOptions o;
  o.devices = {0, 1};
  o.counts = {1, 2};
  o.tasks = {task_from_shape("256x256x256")};
  EXPECT_NO_THROW(validate(o));
  auto fails = [&](ScaleOptions bad, const std::string& needle) {
    try {
      validate(bad);
      ADD_FAILURE() << "accepted; expected " << needle;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), Error::Kind::bad_input);
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  ScaleOptions zero = o;
  zero.counts = {0};
  fails(zero, "counts start at 1");
  ScaleOptions above = o;
  above.counts = {1, 3};
  fails(above, "3 GPUs asked for");
  ScaleOptions none = o;
  none.per_gpu = 0;
  fails(none, "--count");
  EXPECT_THROW(parse_scale_path("warp"), Error);
}

// A whole run of both paths, compile-only, through the library: every point
// and every stage, NVML's absence in the report, not a failure.
// Two "GPUs" in compile-only mode, 128³, no NVML, no progress bar.
ScaleOptions compile_only_options() {
  ScaleOptions o;
  o.devices = {0, 1};
  o.counts = {1, 2};
  o.tasks = {task_from_shape("128x128x128")};
  o.sandbox.mode = EvalMode::compile_only;
  o.source = fs::path(TESSERA_SOURCE_DIR) / "examples" / "hgemm_wmma.cu";
  o.binary = TESSERA_BINARY;
  o.nvml_library = kNoNvml;
  o.progress = false;
  return o;
}

TEST(ScaleRun, BothPathsCompileOnlyGiveEveryPointAndStage) {
  ScaleOptions o = compile_only_options();
  o.per_gpu = 1;
  o.clients = 4;
  const ScaleReport r = run_scale(o);
  EXPECT_EQ(r.mode, "compile_only");
  EXPECT_EQ(r.cache, "cold");
  EXPECT_NE(r.nvml.find("NVML unavailable"), std::string::npos) << r.nvml;
  ASSERT_EQ(r.points.size(), 4u);
  for (const auto& p : r.points) {
    const std::string what = fmt::format("{} on {} GPU(s)", p.path, p.gpus);
    EXPECT_EQ(p.evals, p.gpus) << what;
    EXPECT_EQ(p.statuses.at("compiled"), p.evals) << what << " " << p.note;
    EXPECT_GT(p.evals_per_min, 0) << what;
    EXPECT_GT(p.linear_fraction, 0) << what;
    ASSERT_EQ(int(p.gpu.size()), p.gpus) << what;
    for (const char* stage : {"queue", "compile", "round_trip", "wall"}) EXPECT_TRUE(has_stage(p, stage)) << what << " " << stage;
    if (p.path == "serve") {
      for (const char* stage : {"client", "total", "serve_queue", "compile_ahead"})
        EXPECT_TRUE(has_stage(p, stage)) << what << " " << stage;
    }
  }
  EXPECT_FALSE(fs::exists(fs::temp_directory_path() / fmt::format("tessera-scale-{}", ::getpid())))
      << "the run's own cache is removed";
}

TEST(ScaleRun, SearchPathReadsItsFiguresFromTheRunsTrajectories) {
  ScaleOptions o = compile_only_options();
  o.paths = {ScalePath::search};
  o.per_gpu = 2;
  const ScaleReport r = run_scale(o);
  ASSERT_EQ(r.points.size(), 2u);
  for (const auto& p : r.points) {
    EXPECT_EQ(p.path, "search");
    EXPECT_TRUE(p.note.empty()) << p.note;
    EXPECT_GT(p.evals, 0);
    EXPECT_TRUE(has_stage(p, "compile")) << p.gpus;
  }
}

using CliRun = tessera::testing::CommandResult;

CliRun cli(const std::string& args, const fs::path& cache, int timeout_s = 600) {
  return tessera::testing::run_command(fmt::format("TESSERA_CACHE_DIR='{}' timeout {} {} bench scale {} 2>&1",
                                                   cache.string(), timeout_s, TESSERA_BINARY, args));
}

TEST(ScaleCli, BadOptionsGetOneClearLine) {
  const auto cache = testing::fresh_dir("scale-cli-errors");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"--mode compile_only --gpus 0,1 --counts 0", "counts start at 1"},
      {"--mode compile_only --gpus 0,1 --path pool,warp", "unknown path 'warp'"},
      {"--mode compile_only --gpus 0,1 --counts 1,4", "4 GPUs asked for, but --gpus gives 2"},
      {"--mode compile_only --gpus 0,1 --count 0", "--count must be 1 or more"},
      {"--mode compile_only --gpus 0 --shape 12x", "shape"}};
  for (const auto& [args, needle] : cases) {
    const CliRun r = cli(args, cache, 60);
    EXPECT_EQ(r.code, 2) << args << "\n" << r.out;
    EXPECT_EQ(r.out.rfind("error: ", 0), 0u) << args << "\n" << r.out;
    EXPECT_NE(r.out.find(needle), std::string::npos) << args << "\n" << r.out;
    EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << "one line only:\n" << r.out;
  }
  fs::remove_all(cache);
}

TEST(ScaleCli, CompileOnlyRunPrintsEveryPointAndWritesTheFigures) {
  const auto dir = testing::fresh_dir("scale-cli");
  fs::create_directories(dir);
  const auto json = dir / "scale.json";
  const CliRun r = cli(fmt::format("--mode compile_only --gpus 0,1 --count 1 --clients 4 --shape 128x128x128,128x256x128 "
                                   "--path pool,serve --no-progress --json {}",
                                   json.string()),
                       dir / "cache");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("COMPILE-ONLY"), std::string::npos) << r.out;
  for (const char* shape : {"128x128x128", "128x256x128"})
    for (const char* path : {"pool", "serve"})
      for (int gpus : {1, 2})
        EXPECT_NE(r.out.find(fmt::format("| {} | {} | {} |", path, shape, gpus)), std::string::npos)
            << path << " " << shape << " " << gpus << "\n" << r.out;
  for (const char* stage : {"| queue |", "compile", "round_trip", "serve_queue", "client"})
    EXPECT_NE(r.out.find(stage), std::string::npos) << stage << "\n" << r.out;
  const auto report = nlohmann::json::parse(read_file(json)).get<ScaleReport>();
  EXPECT_EQ(report.points.size(), 8u);
  EXPECT_EQ(report.mode, "compile_only");
  for (const auto& p : report.points) {
    EXPECT_EQ(p.evals, p.gpus);
    EXPECT_TRUE(has_stage(p, "compile")) << p.path;
    // Without NVML a GPU says why it has no readings; with it, it has them.
    for (const auto& g : p.gpu) EXPECT_TRUE(g.samples > 0 || !g.problem.empty()) << p.path;
  }
  fs::remove_all(dir);
}

// Every figure is its own call's: a stand-in NVML answers distinct values
// in NVML's units (MHz, mW, C), and each must land in its own field.
TEST(Nvml, EachReadingIsItsOwnCallsFigureInItsUnits) {
  Nvml nvml(TESSERA_FAKE_NVML);
  ASSERT_TRUE(nvml.available()) << nvml.problem();
  int handle = 0;
  const NvmlReading r = nvml.read(&handle);
  EXPECT_EQ(r.sm_clock_mhz, 1755);
  EXPECT_EQ(r.mem_clock_mhz, 2619);
  EXPECT_DOUBLE_EQ(r.power_w, 512.25);
  EXPECT_DOUBLE_EQ(r.power_limit_w, 700.0);
  EXPECT_EQ(r.temperature_c, 61);
  EXPECT_EQ(r.util_gpu_pct, 87);
  EXPECT_EQ(r.util_mem_pct, 43);
  ASSERT_TRUE(r.reasons_known);
  EXPECT_EQ(throttle_reason_names(r.reasons), std::vector<std::string>{"sw_power_cap"});
  EXPECT_EQ(nvml.name(&handle), "Fake GPU");
}

}  // namespace
}  // namespace tessera::bench
