// `tessera bench suite | compare | report` as a user runs them: one clear
// line for bad input, and a kernel sweep (compile-only here, so it runs
// without a GPU) that is stopped, killed and continued without losing or
// repeating a shape.
#include <gtest/gtest.h>

#include <map>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include <fmt/format.h>

#include "bench/run.hpp"
#include "core/fs.hpp"
#include "core/tasks_file.hpp"
#include "tests/bench/synthetic.hpp"
#include "tests/testing.hpp"

namespace tessera::bench {
namespace {

namespace fs = std::filesystem;

using CliRun = tessera::testing::CommandResult;

// Runs tessera with its own compile cache, so compiles are real the first time.
CliRun run(const std::string& args, const fs::path& cache, int timeout_s = 300) {
  return tessera::testing::run_command(fmt::format("TESSERA_CACHE_DIR='{}' timeout {} {} {} 2>&1", cache.string(),
                                                   timeout_s, TESSERA_BINARY, args));
}

void expect_clear_error(const std::string& args, const std::string& needle) {
  const CliRun r = run(args, testing::fresh_dir("cli-errors-cache"), 60);
  EXPECT_EQ(r.code, 2) << args << "\n" << r.out;
  EXPECT_EQ(r.out.rfind("error: ", 0), 0u) << args << "\n" << r.out;
  EXPECT_NE(r.out.find(needle), std::string::npos) << args << "\n" << r.out;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << "one line only:\n" << r.out;
}

fs::path task_file(const fs::path& dir, const std::vector<std::string>& shapes) {
  fs::create_directories(dir);
  std::string list;
  for (const auto& s : shapes) list += (list.empty() ? "\"" : ", \"") + s + "\"";
  atomic_write_file(dir / "tasks.json", "{\"name\": \"cli\", \"tasks\": [" + list + "]}\n");
  return dir / "tasks.json";
}

std::vector<std::string> result_ids(const fs::path& run_dir) {
  std::vector<std::string> ids;
  if (!fs::exists(run_dir / kResultsFile)) return ids;
  std::istringstream in(read_file(run_dir / kResultsFile));
  for (std::string line; std::getline(in, line);) {
    const auto j = nlohmann::json::parse(line, nullptr, false);
    if (!j.is_discarded()) ids.push_back(record_from_json(j).task.id());
  }
  return ids;
}

TEST(BenchCli, BadInputGetsOneClearLine) {
  const auto dir = testing::fresh_dir("cli-bad");
  const auto tasks = task_file(dir, {"64x64x64"});
  atomic_write_file(dir / "bad_shape.json", "{\"tasks\": [\"64x64\"]}");
  const std::string ex = std::string(TESSERA_SOURCE_DIR) + "/examples";
  expect_clear_error("bench suite", "no tasks");
  expect_clear_error("bench suite --tasks /nonexistent/tasks.json", "file not found");
  expect_clear_error("bench suite --tasks " + (dir / "bad_shape.json").string(), "bad shape");
  expect_clear_error("bench suite --tasks " + tasks.string() + " --kernels cutlass:x", "unknown kernel source");
  expect_clear_error("bench suite --tasks " + tasks.string() + " --kernels dir:/nonexistent/k", "no such file or folder");
  expect_clear_error("bench suite --tasks " + tasks.string() + " --kernels tile:0", "positive integer");
  expect_clear_error("bench suite --tasks " + tasks.string() + " --kernels dir:" + ex + " --compile-only",
                     "holds a kernel for none");
  expect_clear_error("bench suite --tasks " + tasks.string() + " --compile-only", "needs kernels");
  expect_clear_error("bench suite --tasks " + tasks.string() + " --kernels file:" + ex +
                         "/hgemm_tu.cu --nvcc-flag=-lcublas --compile-only",
                     "not allowed");
  expect_clear_error("bench suite --tasks " + tasks.string() + " --kernels file:" + ex +
                         "/torch_ext_hgemm.cu --torch-entry 'hgemm(a, w, c)' --compile-only",
                     "unknown argument 'w'");
  expect_clear_error("bench suite --tasks " + tasks.string() + " --kernels tile:2 --retry ok", "not measured again");
  expect_clear_error("bench suite --tasks " + tasks.string() + " --kernels tile:2 --retry slow", "unknown status");
  expect_clear_error("bench suite --tasks " + tasks.string() + " --retry timeout", "applies to kernel sweeps");
  expect_clear_error("bench suite --tasks " + tasks.string() + " --kernels tile:2 --bucket huge",
                     "the buckets of " + tasks.string() + " are large, medium, small");
  expect_clear_error("bench suite --tasks " + tasks.string() + " --kernels tile:2 --bucket large", "no task of");
  expect_clear_error("bench suite --tasks " + tasks.string() + " --kernels tile:2 --shape 64x64x65",
                     "--shape 64x64x65: no task of " + tasks.string() + " has that shape");
  expect_clear_error("bench suite --kernels tile:2 --shape 64x64", "bad shape");
  expect_clear_error("bench suite --kernels tile:2 --shape 64x64x64 --shape 64x64x64", "given twice");
  expect_clear_error("bench suite --kernels tile:2 --shape 64x64x64 --shape hgemm_64x64x64_TN_none", "given twice");
  expect_clear_error("bench suite --resume /nonexistent/run", "no such run folder");
  expect_clear_error("bench report /nonexistent/run", "no such run folder");
  expect_clear_error("bench report /nonexistent/a /nonexistent/b", "give --out NEW_FOLDER");
  expect_clear_error("bench compare /nonexistent/run --against x.csv", "no such run folder");
}

TEST(BenchCli, BaselineSweepMeasuresOrSaysWhyNot) {
  const auto dir = testing::fresh_dir("cli-baselines");
  const auto tasks = task_file(dir, {"256x256x256", "512x128x1024"});
  if (!tessera::testing::gpu_unavailable_reason().empty()) {
    expect_clear_error("bench suite --tasks " + tasks.string() + " --out " + (dir / "run").string(), "no CUDA GPU");
    EXPECT_FALSE(fs::exists(dir / "run")) << "no folder is left behind";
    expect_clear_error("bench suite --tasks " + tasks.string() + " --kernels tile:2", "needs a CUDA GPU");
    return;
  }
  const CliRun r = run("bench suite --no-progress --tasks " + tasks.string() + " --out " + (dir / "run").string(), dir / "cache");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(result_ids(dir / "run").size(), 2u);
  const std::string csv = read_file(dir / "run" / "shapes.csv");
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 3) << csv;
  EXPECT_NE(csv.find("256_256_256,"), std::string::npos) << csv;
  const CliRun rep = run("bench report " + (dir / "run").string(), dir / "cache");
  EXPECT_EQ(rep.code, 0) << rep.out;
  EXPECT_TRUE(fs::exists(dir / "run" / "report.html"));
}

// Distinct kernels per shape, so each one is a real compile.
fs::path kernel_dir(const fs::path& dir, const std::vector<std::string>& shapes) {
  const std::string naive = read_file(std::string(TESSERA_SOURCE_DIR) + "/examples/hgemm_naive.cu");
  for (std::size_t i = 0; i < shapes.size(); ++i)
    atomic_write_file(dir / "kernels" / (shapes[i] + ".cu"), fmt::format("// variant {}\n{}", i, naive));
  return dir / "kernels";
}

// The GPU of each record, by task id (-1: none named).
std::map<std::string, int> gpu_of(const fs::path& run_dir) {
  std::map<std::string, int> out;
  std::istringstream in(read_file(run_dir / kResultsFile));
  for (std::string line; std::getline(in, line);) {
    const auto r = record_from_json(nlohmann::json::parse(line));
    out[r.task.id()] = r.gpu;
  }
  return out;
}

// --gpus spreads the shapes over a child sweep per GPU (compile-only here, so
// any ordinals do): every shape recorded once, named with its GPU, and a run
// continued with the children's leftovers merged, never measured again.
TEST(BenchCli, GpusSpreadShapesAndRecordsNameTheirGpu) {
  const auto dir = testing::fresh_dir("cli-gpus");
  const std::vector<std::string> shapes = {"256x256x256", "512x128x1024", "128x128x128", "384x256x512", "256x512x256"};
  const auto tasks = task_file(dir, shapes);
  const auto kernels = kernel_dir(dir, shapes);
  const std::string args = "bench suite --compile-only --no-progress --tasks " + tasks.string() + " --kernels dir:" +
                           kernels.string() + " --gpus 0,1 --out ";
  const CliRun r = run(args + (dir / "run").string(), dir / "cache");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(result_ids(dir / "run").size(), shapes.size());
  std::map<int, int> per_gpu;
  for (const auto& [id, gpu] : gpu_of(dir / "run")) ++per_gpu[gpu];
  int recorded = 0;
  for (const auto& [gpu, count] : per_gpu) {
    EXPECT_TRUE(gpu == 0 || gpu == 1) << gpu;
    recorded += count;
  }
  EXPECT_EQ(recorded, int(shapes.size())) << "each shape taken from the queue by one of the two GPUs";
  // The queue the children shared: longest first, by FLOPs.
  std::vector<double> flops;
  for (const auto& t : load_tasks_file((dir / "run" / "gpus" / "tasks.json").string())) flops.push_back(t.flops());
  EXPECT_EQ(flops.size(), shapes.size());
  EXPECT_TRUE(std::is_sorted(flops.rbegin(), flops.rend())) << "longest first";
  for (const auto& entry : fs::directory_iterator(dir / "run" / "gpus"))
    EXPECT_NE(entry.path().filename().string().rfind("claims-", 0), 0u) << "the session's claims are gone: " << entry.path();
  const std::string csv = read_file(dir / "run" / "shapes.csv");
  EXPECT_NE(csv.substr(0, csv.find('\n')).find(",gpu"), std::string::npos) << csv;
  EXPECT_FALSE(fs::exists(dir / "run" / "gpus" / "gpu0")) << "the children's folders are merged, then gone";

  const CliRun again = run(args + (dir / "run").string(), dir / "cache");
  ASSERT_EQ(again.code, 0) << again.out;
  EXPECT_NE(again.out.find("(0 this session)"), std::string::npos) << again.out;
  EXPECT_EQ(result_ids(dir / "run").size(), shapes.size()) << "nothing measured twice";

  // A session cut off before it merged: GPU 1's child finished two shapes.
  const auto two = task_file(dir / "two", {shapes[1], shapes[3]});
  const CliRun child = run("bench suite --compile-only --no-progress --tasks " + two.string() + " --kernels dir:" +
                               kernels.string() + " --device 1 --out " + (dir / "cut" / "gpus" / "gpu1").string(),
                           dir / "cache");
  ASSERT_EQ(child.code, 0) << child.out;
  // A search: child keeps each shape's search in its folder; the run keeps it after the merge.
  atomic_write_file(dir / "cut" / "gpus" / "gpu1" / "search" / "some-task" / "trajectories.jsonl", "{}\n");
  const CliRun cont = run(args + (dir / "cut").string(), dir / "cache");
  ASSERT_EQ(cont.code, 0) << cont.out;
  const auto gpus = gpu_of(dir / "cut");
  EXPECT_EQ(result_ids(dir / "cut").size(), shapes.size()) << "the leftovers merged, the rest measured, none twice";
  EXPECT_EQ(gpus.size(), shapes.size());
  for (const auto& s : {shapes[1], shapes[3]}) {
    const auto it = std::find_if(gpus.begin(), gpus.end(), [&](const auto& g) { return g.first.find(s) != std::string::npos; });
    ASSERT_NE(it, gpus.end()) << s;
    EXPECT_EQ(it->second, 1) << s << " came from GPU 1's leftover run";
  }
  EXPECT_TRUE(fs::exists(dir / "cut" / "search" / "some-task" / "trajectories.jsonl")) << "a child's searches are kept";
  EXPECT_FALSE(fs::exists(dir / "cut" / "gpus" / "gpu1"));

  expect_clear_error(args + (dir / "other").string() + " --device 1", "give --device or --gpus, not both");
  expect_clear_error("bench suite --compile-only --tasks " + tasks.string() + " --kernels dir:" + kernels.string() +
                         " --gpus 0,x --out " + (dir / "other").string(),
                     "--gpus takes 'all' or device ordinals");
  expect_clear_error("bench suite --compile-only --tasks " + tasks.string() + " --kernels dir:" + kernels.string() +
                         " --gpus 1,0,1 --out " + (dir / "other").string(),
                     "names a GPU twice");
  if (!tessera::testing::gpu_unavailable_reason().empty()) {
    expect_clear_error("bench suite --tasks " + tasks.string() + " --kernels dir:" + kernels.string() +
                           " --gpus 0,1 --out " + (dir / "other").string(),
                       "no CUDA GPU");
    EXPECT_FALSE(fs::exists(dir / "other")) << "no folder is left behind";
  }
}

// A search kept for a shape cut in its tune (bench/measure.hpp) lives in the
// run's search/ folder, whichever GPU measured it: the --gpus child that
// claims the shape next starts from it (here its note, a search with no best
// config), and it goes once the shape is recorded.
TEST(BenchCli, AGpusChildStartsAShapeFromTheRunsKeptSearch) {
  const auto dir = testing::fresh_dir("cli-gpus-kept");
  const auto tasks = task_file(dir, {"256x256x256"});
  const std::string id = load_tasks_file(tasks.string()).at(0).id();
  const fs::path kept = dir / "run" / "search" / (id + ".kept.json");
  atomic_write_file(kept, R"({"best": null, "summary": {"evaluated": 2, "sweep": []}, "note": "kept-note", "seconds": 3})");
  const CliRun r = run("bench suite --compile-only --no-progress --tasks " + tasks.string() +
                           " --kernels search:2:evolve:alone --gpus 0,1 --out " + (dir / "run").string(),
                       dir / "cache");
  ASSERT_EQ(r.code, 0) << r.out;
  const bench::Run got = load_run(dir / "run");
  ASSERT_EQ(got.records.size(), 1u);
  EXPECT_EQ(got.records[0].note, "kept-note") << "the child started from the run's kept search";
  EXPECT_FALSE(got.records[0].kernel.has_value());
  EXPECT_GE(got.records[0].wall_s, 3.0) << "its time counts the kept search's";
  EXPECT_FALSE(fs::exists(kept)) << "recorded: the kept search goes";
}

// A SIGINT sent to the parent alone (as a job scheduler sends it; a Ctrl-C at
// the terminal reaches only the parent too, the children having process
// groups of their own) is passed on: each child finishes its shape, the run
// holds the records merged as they came, and the next run finishes the rest.
TEST(BenchCli, GpusSweepStopsOnItsParentsSigintAndContinues) {
  const auto dir = testing::fresh_dir("cli-gpus-stop");
  std::vector<std::string> shapes;
  // Enough that neither child can finish its share between the first record
  // and the signal (the parent merges every 250 ms; a compile server on a
  // 16-core machine compiles one of these in tens of ms: 24 shapes were done).
  for (int i = 1; i <= 120; ++i) shapes.push_back(fmt::format("{}x128x128", 64 * i));
  const auto tasks = task_file(dir, shapes);
  const auto kernels = kernel_dir(dir, shapes);
  const fs::path out = dir / "run";
  const fs::path cache = dir / "cache";
  const std::string args = "bench suite --compile-only --no-progress --tasks " + tasks.string() + " --kernels dir:" +
                           kernels.string() + " --gpus 0,1 --out " + out.string();
  const fs::path pid_file = dir / "pid", code_file = dir / "code";
  // Each file is written whole, then renamed into place: the poll below may
  // see it the moment it exists, and an `echo >file` is empty at that moment.
  const std::string bg =
      fmt::format("(TESSERA_CACHE_DIR='{0}' {1} {2} >'{3}' 2>&1 & echo $! >'{4}.tmp' && mv '{4}.tmp' '{4}'; wait $!; "
                  "echo $? >'{5}.tmp' && mv '{5}.tmp' '{5}') &",
                  cache.string(), TESSERA_BINARY, args, (dir / "log").string(), pid_file.string(), code_file.string());
  ASSERT_EQ(std::system(bg.c_str()), 0);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(240);
  while ((!fs::exists(pid_file) || result_ids(out).empty()) && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ASSERT_FALSE(result_ids(out).empty()) << "records join the run while the children measure";
  ::kill(pid_t(std::stol(read_file(pid_file))), SIGINT);
  while (!fs::exists(code_file) && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_TRUE(fs::exists(code_file)) << read_file(dir / "log");
  // Each child had at least ten shapes left when the signal came (a real compile each).
  EXPECT_LT(result_ids(out).size(), shapes.size()) << read_file(dir / "log");
  EXPECT_EQ(std::stoi(read_file(code_file)), 5) << read_file(dir / "log");
  EXPECT_NE(read_file(dir / "log").find("continue with: tessera bench suite --resume"), std::string::npos)
      << read_file(dir / "log");
  EXPECT_FALSE(fs::exists(out / "gpus" / "gpu0")) << "both children ended and were merged";

  const CliRun r = run(args, cache);
  ASSERT_EQ(r.code, 0) << r.out;
  const auto ids = result_ids(out);
  EXPECT_EQ(ids.size(), shapes.size());
  EXPECT_EQ(std::set<std::string>(ids.begin(), ids.end()).size(), shapes.size()) << "none measured twice";
  for (const auto& [id, gpu] : gpu_of(out)) EXPECT_TRUE(gpu == 0 || gpu == 1) << id;
}

TEST(BenchCli, InterruptedSweepContinuesWithoutLosingOrRepeatingAShape) {
  const auto dir = testing::fresh_dir("cli-resume");
  const std::vector<std::string> shapes = {"64x64x64", "64x128x64", "128x64x64", "128x128x64", "64x64x128", "128x128x128"};
  const auto tasks = task_file(dir, shapes);
  const auto kernels = kernel_dir(dir, shapes);
  const fs::path out = dir / "run";
  const fs::path cache = dir / "cache";
  const std::string args = fmt::format("bench suite --no-progress --compile-only --tasks {} --kernels dir:{} --out {}",
                                       tasks.string(), kernels.string(), out.string());

  // 1. A time limit shorter than one shape cuts the first one short: exit 5,
  // nothing recorded, why, and how to go on.
  CliRun r = run(args + " --max-minutes 0.000001", cache);
  EXPECT_EQ(r.code, 5) << r.out;
  EXPECT_NE(r.out.find("tessera bench suite --resume " + out.string()), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("alone needs a longer limit"), std::string::npos) << r.out;
  EXPECT_EQ(result_ids(out).size(), 0u);

  // 2. Killed (SIGKILL) in the middle of the sweep.
  const fs::path pid_file = dir / "pid";
  const std::string bg = fmt::format("TESSERA_CACHE_DIR='{0}' {1} bench suite --resume {2} --no-progress >/dev/null 2>&1 & "
                                     "echo $! > '{3}.tmp' && mv '{3}.tmp' '{3}'",
                                     cache.string(), TESSERA_BINARY, out.string(), pid_file.string());
  ASSERT_EQ(std::system(bg.c_str()), 0);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(240);
  while (result_ids(out).size() < 3 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const pid_t pid = pid_t(std::stol(read_file(pid_file)));
  ::kill(pid, SIGKILL);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const auto after_kill = result_ids(out);
  EXPECT_GE(after_kill.size(), 3u);

  // 3. Run again: it finishes the rest, each shape exactly once, in order.
  r = run(args, cache);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("6 of 6 shapes recorded"), std::string::npos) << r.out;
  const auto ids = result_ids(out);
  ASSERT_EQ(ids.size(), shapes.size());
  EXPECT_EQ(std::set<std::string>(ids.begin(), ids.end()).size(), shapes.size());
  for (std::size_t i = 0; i < after_kill.size(); ++i) EXPECT_EQ(ids[i], after_kill[i]) << "records are only appended";
  const bench::Run final_run = load_run(out);
  for (const auto& rec : final_run.records) {
    ASSERT_TRUE(rec.kernel.has_value());
    EXPECT_EQ(rec.kernel->result.status, Status::compiled) << rec.kernel->result.reason;
  }
  // A finished run is continued as a no-op; other arguments are refused.
  r = run(args, cache);
  EXPECT_EQ(r.code, 0) << r.out;
  const CliRun other = run(fmt::format("bench suite --compile-only --tasks {} --kernels tile:4 --out {}", tasks.string(),
                                       out.string()),
                           cache);
  EXPECT_EQ(other.code, 2) << other.out;
  EXPECT_NE(other.out.find("cannot be continued"), std::string::npos) << other.out;
  // The report of a run with nothing timed still renders, and says so.
  r = run("bench report " + out.string(), cache);
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(read_file(out / "report.html").find("Nothing timed yet"), std::string::npos);
}

// --bucket and --shape measure only the task file's shapes in those buckets or
// of those shapes (in the file's order), and the run keeps the filter: --resume
// measures the same shapes, not the others, and the folder refuses another
// filter or none. --shape without a task file measures the shapes given.
TEST(BenchCli, FiltersKeepOnlyTheirShapesAndTheRunKeepsThem) {
  const auto dir = testing::fresh_dir("cli-filters");
  // 2*M*N*K: 64x64x64 and 128x64x64 are small (<= 2^30), 2048x1024x512 medium.
  const std::vector<std::string> shapes = {"64x64x64", "2048x1024x512", "128x64x64"};
  const auto tasks = task_file(dir, shapes);
  const auto kernels = kernel_dir(dir, shapes);
  const std::string args = fmt::format("bench suite --no-progress --compile-only --tasks {} --kernels dir:{}",
                                       tasks.string(), kernels.string());
  struct Filter {
    std::string flags, folder;
    std::vector<std::string> ids;
  };
  const std::vector<Filter> filters = {
      {"--bucket medium", "bucket", {"hgemm_2048x1024x512_TN_none"}},
      {"--shape 128x64x64 --shape hgemm_64x64x64_TN_none", "shape",
       {"hgemm_64x64x64_TN_none", "hgemm_128x64x64_TN_none"}}};
  for (const auto& [filter, folder, ids] : filters) {
    SCOPED_TRACE(filter);
    const fs::path out = dir / folder;
    CliRun r = run(args + " " + filter + " --out " + out.string(), dir / "cache");
    ASSERT_EQ(r.code, 0) << r.out;
    EXPECT_NE(r.out.find(fmt::format("{0} of {0} shapes recorded", ids.size())), std::string::npos) << r.out;
    EXPECT_EQ(result_ids(out), ids);
    r = run("bench suite --no-progress --resume " + out.string(), dir / "cache");
    ASSERT_EQ(r.code, 0) << r.out;
    EXPECT_EQ(result_ids(out).size(), ids.size()) << "the resumed run keeps to its filter";
    r = run("bench suite --resume " + out.string() + " --bucket small", dir / "cache");
    EXPECT_EQ(r.code, 2) << r.out;
    r = run(args + " --out " + out.string(), dir / "cache");  // without the filter: another run
    EXPECT_EQ(r.code, 2) << r.out;
    EXPECT_NE(r.out.find("cannot be continued"), std::string::npos) << r.out;
  }
  // The flags' order does not make another run.
  const CliRun again = run(args + " --shape hgemm_64x64x64_TN_none --shape 128x64x64 --out " + (dir / "shape").string(),
                           dir / "cache");
  EXPECT_EQ(again.code, 0) << again.out;
  EXPECT_NE(again.out.find("2 of 2 shapes recorded in " + (dir / "shape").string() + " (0 this session)"),
            std::string::npos)
      << again.out;
  const fs::path alone = dir / "alone";
  CliRun r = run(fmt::format("bench suite --no-progress --compile-only --kernels dir:{} --shape 2048x1024x512 --out {}",
                             kernels.string(), alone.string()),
                 dir / "cache");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(result_ids(alone), std::vector<std::string>{"hgemm_2048x1024x512_TN_none"});
  r = run("bench suite --no-progress --resume " + alone.string(), dir / "cache");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(result_ids(alone).size(), 1u);
}

// search:N lends each shape's first baseline timing to the search's later
// evaluations by default (the sweep then ranks as tile:N's does), in one
// process and in every child of --gpus; --no-reuse-baselines times them
// beside every evaluation. A sweep of other kernels keeps no such option.
TEST(BenchCli, SearchSweepsReuseBaselinesUnlessToldNot) {
  const auto dir = testing::fresh_dir("cli-reuse");
  const auto tasks = task_file(dir, {"128x128x256"});
  const std::string args = "bench suite --no-progress --compile-only --tasks " + tasks.string();
  const auto measure_of = [](const fs::path& out) {
    return nlohmann::json::parse(read_file(out / kConfigFile)).at("options").at("measure");
  };
  // Each shape's search keeps its config: what it was told.
  const auto searches_reuse = [](const fs::path& out) {
    std::vector<bool> v;
    for (const auto& e : fs::directory_iterator(out / "search"))
      v.push_back(nlohmann::json::parse(read_file(e.path() / "config.json")).at("config").at("reuse_baselines"));
    return v;
  };
  struct Case {
    std::string name, extra;
    bool reuse;
  };
  for (const Case& c : {Case{"default", "", true}, Case{"interleaved", " --no-reuse-baselines", false},
                        Case{"gpus", " --gpus 0,1", true}, Case{"gpus-interleaved", " --gpus 0,1 --no-reuse-baselines", false}}) {
    const fs::path out = dir / c.name;
    const CliRun r = run(args + " --kernels search:2:alone --out " + out.string() + c.extra, dir / "cache");
    ASSERT_EQ(r.code, 0) << c.name << "\n" << r.out;
    EXPECT_EQ(measure_of(out).value("reuse_baselines", false), c.reuse) << c.name << ": " << measure_of(out).dump();
    EXPECT_EQ(searches_reuse(out), std::vector<bool>{c.reuse}) << c.name;
  }
  // Continued with its own arguments, an interleaved run stays interleaved.
  const CliRun resumed = run("bench suite --no-progress --resume " + (dir / "interleaved").string(), dir / "cache");
  ASSERT_EQ(resumed.code, 0) << resumed.out;
  EXPECT_FALSE(measure_of(dir / "interleaved").contains("reuse_baselines"));
  const auto kernels = kernel_dir(dir, {"128x128x256"});
  const CliRun files = run(args + " --kernels dir:" + kernels.string() + " --out " + (dir / "files").string(), dir / "cache");
  ASSERT_EQ(files.code, 0) << files.out;
  EXPECT_FALSE(measure_of(dir / "files").contains("reuse_baselines")) << measure_of(dir / "files").dump();
}

TEST(BenchCli, TorchExtensionKernelGoesThroughTheSuite) {
  const auto dir = testing::fresh_dir("cli-torch");
  const auto tasks = task_file(dir, {"256x256x256"});
  const CliRun r = run(fmt::format("bench suite --no-progress --compile-only --tasks {} --kernels file:{}/examples/"
                                   "torch_ext_hgemm.cu --torch-entry 'hgemm(a, b_nk, c)' --out {}",
                                   tasks.string(), TESSERA_SOURCE_DIR, (dir / "run").string()),
                       dir / "cache", 600);
  ASSERT_EQ(r.code, 0) << r.out;
  const bench::Run run_dir = load_run(dir / "run");
  ASSERT_EQ(run_dir.records.size(), 1u);
  const auto& k = *run_dir.records[0].kernel;
  EXPECT_EQ(k.result.status, Status::compiled) << k.result.reason << "\n" << k.result.compile.log;
  EXPECT_EQ(k.result.compile.options, std::vector<std::string>{"--default-stream=per-thread"});
}

}  // namespace
}  // namespace tessera::bench
