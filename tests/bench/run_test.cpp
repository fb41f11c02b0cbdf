// The run folder: records appended and fsync'd, a run continued only with
// the same arguments, a cut last line repaired, one writer at a time.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "bench/run.hpp"
#include "core/error.hpp"
#include "core/fs.hpp"
#include "tests/bench/synthetic.hpp"

namespace tessera::bench {
namespace {

using testing::fresh_dir;
using testing::synthetic_config;
using testing::synthetic_record;

testing::SyntheticOptions small_grid() {
  testing::SyntheticOptions o;
  o.sizes = {64, 128};
  return o;
}

TEST(BenchRecord, RoundTripsThroughJson) {
  const auto o = small_grid();
  const auto c = synthetic_config(o);
  const ShapeRecord r = synthetic_record(c.tasks[3], c.buckets, o);
  const ShapeRecord back = record_from_json(nlohmann::json::parse(to_json(r).dump()));
  EXPECT_EQ(back.task.id(), r.task.id());
  EXPECT_EQ(back.bucket, r.bucket);
  ASSERT_TRUE(back.kernel.has_value());
  EXPECT_EQ(back.kernel->name, r.kernel->name);
  EXPECT_DOUBLE_EQ(*kernel_us(back), *kernel_us(r));
  EXPECT_DOUBLE_EQ(*baseline_us(back, "cublaslt_autotuned"), *baseline_us(r, "cublaslt_autotuned"));
  EXPECT_EQ(back.device.dram_gbps, 4800);
  EXPECT_THROW(record_from_json(nlohmann::json{{"schema", "other"}}), Error);
}

TEST(BenchRun, AppendsAndContinues) {
  const auto dir = fresh_dir("run-continue");
  const auto o = small_grid();
  const auto c = synthetic_config(o);
  {
    RunWriter w(dir, c);
    EXPECT_FALSE(w.resumed());
    w.append(synthetic_record(c.tasks[0], c.buckets, o));
    w.append(synthetic_record(c.tasks[1], c.buckets, o));
  }
  RunWriter again(dir, c);
  EXPECT_TRUE(again.resumed());
  EXPECT_EQ(again.finished(), (std::set<std::string>{c.tasks[0].id(), c.tasks[1].id()}));
  EXPECT_EQ(load_run(dir).records.size(), 2u);
}

TEST(BenchRun, RefusesOtherArgumentsAndASecondWriter) {
  const auto dir = fresh_dir("run-refuse");
  const auto o = small_grid();
  auto c = synthetic_config(o);
  RunWriter w(dir, c);
  EXPECT_THROW(RunWriter(dir, c), Error);  // locked
  auto other = c;
  other.kernels = "tile:99";
  EXPECT_NE(config_difference(c, other).find("tile:99"), std::string::npos);
  other = c;
  other.tasks.pop_back();
  EXPECT_NE(config_difference(c, other).find("tasks differ"), std::string::npos);
  other = c;
  other.options = {{"measure", {{"hot", true}}}};
  EXPECT_NE(config_difference(c, other).find("options differ"), std::string::npos);
  other = c;
  other.created_at = "later";
  other.tasks_file = "/elsewhere/synthetic.json";
  EXPECT_EQ(config_difference(c, other), "");
}

TEST(BenchRun, IncompatibleRunFolderIsBadInput) {
  const auto dir = fresh_dir("run-incompatible");
  const auto o = small_grid();
  auto c = synthetic_config(o);
  { RunWriter w(dir, c); }
  c.kernels = "none";
  try {
    RunWriter w(dir, c);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), Error::Kind::bad_input);
    EXPECT_NE(std::string(e.what()).find("--resume"), std::string::npos) << e.what();
  }
}

TEST(BenchRun, CutLastLineIsDroppedAndTheNextAppendStartsClean) {
  const auto dir = fresh_dir("run-cut");
  const auto o = small_grid();
  const auto c = synthetic_config(o);
  {
    RunWriter w(dir, c);
    w.append(synthetic_record(c.tasks[0], c.buckets, o));
  }
  {  // a crash in the middle of writing the second record
    std::ofstream out(dir / kResultsFile, std::ios::app);
    out << to_json(synthetic_record(c.tasks[1], c.buckets, o)).dump().substr(0, 80);
  }
  EXPECT_EQ(load_run(dir).records.size(), 1u);  // readers skip the cut line
  {
    RunWriter w(dir, c);
    EXPECT_NE(w.repair_note().find("cut last line"), std::string::npos);
    EXPECT_EQ(w.finished().size(), 1u);
    w.append(synthetic_record(c.tasks[1], c.buckets, o));
  }
  const bench::Run run = load_run(dir);
  ASSERT_EQ(run.records.size(), 2u);
  EXPECT_EQ(run.records[1].task.id(), c.tasks[1].id());
}

TEST(BenchRun, LoadRejectsWhatIsNotARun) {
  EXPECT_THROW(load_run(fresh_dir("run-missing")), Error);
  const auto dir = fresh_dir("run-empty");
  std::filesystem::create_directories(dir);
  EXPECT_THROW(load_run(dir), Error);
  atomic_write_file(dir / kConfigFile, "{\"schema\": \"something else\"}");
  EXPECT_THROW(load_run(dir), Error);
}

}  // namespace
}  // namespace tessera::bench
