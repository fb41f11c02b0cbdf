// Several runs of one protocol joined into one folder, reported together.
#include <gtest/gtest.h>

#include <functional>

#include "bench/join.hpp"
#include "core/error.hpp"
#include "tests/bench/synthetic.hpp"

namespace tessera::bench {
namespace {

namespace fs = std::filesystem;

// A run of the tasks numbered in `which` of the synthetic grid over 64 and
// 128, as a --shape filter would make it, each record's wall time `wall_s`.
fs::path part(const std::string& name, const std::vector<int>& which, double wall_s,
              const std::function<void(RunConfig&)>& edit = {}) {
  testing::SyntheticOptions o;
  o.sizes = {64, 128};
  const RunConfig all = testing::synthetic_config(o);
  RunConfig c = all;
  c.tasks.clear();
  c.options["shapes"] = nlohmann::json::array();
  for (int i : which) c.tasks.push_back(all.tasks[i]), c.options["shapes"].push_back(all.tasks[i].shape());
  if (edit) edit(c);
  const auto dir = testing::fresh_dir(name);
  RunWriter w(dir, c);
  for (const auto& t : c.tasks) {
    ShapeRecord r = testing::synthetic_record(t, c.buckets, o);
    r.wall_s = wall_s;
    w.append(r);
  }
  return dir;
}

// The error join_runs throws ("" when it does not).
std::string join_error(const std::vector<fs::path>& runs, const fs::path& out) {
  try {
    join_runs(runs, out);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), Error::Kind::bad_input) << e.what();
    return e.what();
  }
  return {};
}

TEST(JoinRuns, TwoFilteredRunsBecomeOneTheLaterRecordWinning) {
  const auto a = part("join-a", {0, 1, 2}, 10);
  const auto b = part("join-b", {2, 5}, 20);
  const auto out = testing::fresh_dir("join-out");
  const JoinedRun j = join_runs({a, b}, out);
  ASSERT_EQ(j.run.config.tasks.size(), 4u);
  const auto grid = testing::synthetic_config({.sizes = {64, 128}}).tasks;
  const std::vector<int> order = {0, 1, 2, 5};  // first appearance
  for (std::size_t i = 0; i < order.size(); ++i) EXPECT_EQ(j.run.config.tasks[i].id(), grid[order[i]].id());
  ASSERT_EQ(j.run.records.size(), 4u);
  EXPECT_EQ(j.replaced, 1);
  for (const auto& r : j.run.records) EXPECT_EQ(r.wall_s, r.task.id() == grid[0].id() || r.task.id() == grid[1].id() ? 10 : 20)
      << r.task.id();
  // Its options are the runs' protocol, without their filters, and say where it came from.
  EXPECT_FALSE(j.run.config.options.contains("shapes"));
  EXPECT_EQ(j.run.config.options["joined_from"], nlohmann::json::array({a.string(), b.string()}));
  // A joined folder is a run: it loads alone, and joins again.
  EXPECT_EQ(load_run(out).records.size(), 4u);
  EXPECT_EQ(join_runs({out, part("join-c", {7}, 30)}, testing::fresh_dir("join-again")).run.records.size(), 5u);
}

TEST(JoinRuns, RefusesOtherProtocolsAndAFolderInUseWritingNothing) {
  const auto a = part("join-p", {0, 1}, 10);
  const auto out = testing::fresh_dir("join-refused");
  fs::remove_all(out);
  EXPECT_NE(join_error({a, part("join-k", {2}, 10, [](RunConfig& c) { c.kernels = "tile:24"; })}, out)
                .find("it measures kernels 'tile:8', not 'tile:24'"),
            std::string::npos);
  EXPECT_NE(join_error({a, part("join-o", {2}, 10, [](RunConfig& c) { c.options["measure"]["hot"] = true; })}, out)
                .find("its options differ"),
            std::string::npos);
  const auto buckets = join_error({a, part("join-u", {2}, 10, [](RunConfig& c) { c.buckets.front().name = "tiny"; })}, out);
  EXPECT_NE(buckets.find("its buckets differ"), std::string::npos) << buckets;
  EXPECT_FALSE(fs::exists(out)) << "a refused join writes nothing";
  EXPECT_NE(join_error({a}, a).find("is not empty"), std::string::npos);
  EXPECT_NE(join_error({}, out).find("no runs"), std::string::npos);
}

}  // namespace
}  // namespace tessera::bench
