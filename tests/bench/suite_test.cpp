// The sweep loop with a fake measurer: only unfinished shapes are measured,
// a stop between shapes loses nothing, harness failures are retried later.
#include <gtest/gtest.h>

#include <cstdio>
#include <functional>

#include "bench/claims.hpp"
#include "bench/deadline_evaluator.hpp"
#include "bench/progress.hpp"
#include "bench/suite.hpp"
#include "core/error.hpp"
#include "tests/bench/synthetic.hpp"

namespace tessera::bench {
namespace {

class FakeMeasurer final : public ShapeMeasurer {
public:
  explicit FakeMeasurer(testing::SyntheticOptions o) : o_(std::move(o)) {}
  ShapeRecord measure(const Task& task, const std::string& bucket) override {
    measured.push_back(task.id());
    shapes.push_back(task.shape());
    if (throw_for == task.id()) throw Error(Error::Kind::unavailable, "GPU fell off the bus");
    ShapeRecord r = testing::synthetic_record(task, default_buckets(), o_);
    EXPECT_EQ(r.bucket, bucket);
    if (infra_for.count(task.id())) r.kernel->result.status = Status::infra_error;
    if (timeout_for.count(task.id())) r.kernel->result.status = Status::timeout;
    if (stop_after && int(measured.size()) == stop_after) *stop_flag = true;
    if (wall_s) r.wall_s = wall_s(task);
    return r;
  }
  std::string describe() const override { return "fake"; }
  double seconds_kept(const Task& task) const override { return kept ? kept(task) : 0; }

  std::vector<std::string> measured;
  std::vector<std::string> shapes;
  std::string throw_for;
  std::set<std::string> infra_for;
  std::set<std::string> timeout_for;
  int stop_after = 0;
  std::atomic<bool>* stop_flag = nullptr;
  std::function<double(const Task&)> wall_s;  // the time the record says the shape took (empty: the synthetic one)
  std::function<double(const Task&)> kept;    // seconds of a shape an earlier run kept (empty: none)

private:
  testing::SyntheticOptions o_;
};

struct Fixture {
  testing::SyntheticOptions o;
  RunConfig config;
  std::filesystem::path dir;
  explicit Fixture(const std::string& name) {
    o.sizes = {64, 128};
    config = testing::synthetic_config(o);
    dir = testing::fresh_dir(name);
  }
};

SuiteOptions quiet() {
  SuiteOptions s;
  s.progress = false;
  return s;
}

TEST(BenchSuite, MeasuresEveryShapeOnceAcrossAStop) {
  Fixture f("suite-stop");
  std::atomic<bool> stop{false};
  {
    RunWriter w(f.dir, f.config);
    FakeMeasurer m(f.o);
    m.stop_after = 3;
    m.stop_flag = &stop;
    const auto out = run_suite(w, f.config, m, quiet(), stop);
    EXPECT_FALSE(out.complete);
    EXPECT_EQ(out.stopped_because, "interrupted");
    EXPECT_EQ(out.measured, 3);
  }
  stop = false;
  RunWriter w(f.dir, f.config);
  FakeMeasurer m(f.o);
  const auto out = run_suite(w, f.config, m, quiet(), stop);
  EXPECT_TRUE(out.complete);
  EXPECT_EQ(out.done_before, 3);
  EXPECT_EQ(out.measured, 5);
  for (std::size_t i = 0; i < 3; ++i)
    EXPECT_EQ(std::count(m.measured.begin(), m.measured.end(), f.config.tasks[i].id()), 0);
  const bench::Run run = load_run(f.dir);
  ASSERT_EQ(run.records.size(), 8u);
  for (std::size_t i = 0; i < 8; ++i) EXPECT_EQ(run.records[i].task.id(), f.config.tasks[i].id());
  EXPECT_TRUE(std::filesystem::exists(f.dir / "shapes.csv"));
  EXPECT_TRUE(std::filesystem::exists(f.dir / "buckets.csv"));
  EXPECT_TRUE(std::filesystem::exists(f.dir / "summary.json"));
}

TEST(BenchSuite, HarnessFailuresAreNotRecordedAndStopAfterARun) {
  Fixture f("suite-infra");
  std::atomic<bool> stop{false};
  RunWriter w(f.dir, f.config);
  FakeMeasurer m(f.o);
  m.infra_for = {f.config.tasks[1].id()};
  m.throw_for = f.config.tasks[2].id();
  auto out = run_suite(w, f.config, m, quiet(), stop);
  EXPECT_EQ(out.harness_failures, 2);
  EXPECT_EQ(out.measured, 6);
  EXPECT_FALSE(out.complete);
  EXPECT_FALSE(w.finished().count(f.config.tasks[1].id()));
  EXPECT_FALSE(w.finished().count(f.config.tasks[2].id()));

  FakeMeasurer again(f.o);  // the next run retries exactly those two
  out = run_suite(w, f.config, again, quiet(), stop);
  EXPECT_TRUE(out.complete);
  EXPECT_EQ(again.measured, (std::vector<std::string>{f.config.tasks[1].id(), f.config.tasks[2].id()}));

  Fixture g("suite-infra-stop");
  RunWriter w2(g.dir, g.config);
  FakeMeasurer failing(g.o);
  for (const auto& t : g.config.tasks) failing.infra_for.insert(t.id());
  out = run_suite(w2, g.config, failing, quiet(), stop);
  EXPECT_EQ(int(failing.measured.size()), kMaxHarnessFailuresInARow);
  EXPECT_NE(out.stopped_because.find("harness failures in a row"), std::string::npos);
}

TEST(BenchSuite, RetryMeasuresTheShapesOfAStatusAgainAndTheNewRecordWins) {
  Fixture f("suite-retry");
  std::atomic<bool> stop{false};
  const std::string slow = f.config.tasks[5].id();
  {
    RunWriter w(f.dir, f.config);
    FakeMeasurer m(f.o);
    m.timeout_for = {slow};
    EXPECT_TRUE(run_suite(w, f.config, m, quiet(), stop).complete);  // a timeout is the kernel's result: recorded
  }
  RunWriter w(f.dir, f.config);
  EXPECT_TRUE(w.reopen({"compile_error"}).empty());
  EXPECT_EQ(w.reopen({"timeout"}), std::vector<std::string>{slow}) << "the synthetic run's other failures stay";
  EXPECT_FALSE(w.finished().count(slow));
  EXPECT_EQ(w.finished().size(), 7u);
  FakeMeasurer again(f.o);
  const auto out = run_suite(w, f.config, again, quiet(), stop);
  EXPECT_TRUE(out.complete);
  EXPECT_EQ(again.measured, std::vector<std::string>{slow});
  EXPECT_TRUE(w.reopen({"timeout"}).empty()) << "its latest record is ok";
  const bench::Run run = load_run(f.dir);
  ASSERT_EQ(run.records.size(), 8u) << "one record per shape: the retry supersedes the timeout";
  EXPECT_EQ(run.records[5].task.id(), slow);
  EXPECT_EQ(run.records[5].kernel->result.status, Status::ok);
}

TEST(BenchSuite, TimeLimitStopsBetweenShapes) {
  Fixture f("suite-time");
  std::atomic<bool> stop{false};
  RunWriter w(f.dir, f.config);
  FakeMeasurer m(f.o);
  SuiteOptions o = quiet();
  o.max_minutes = 1e-9;  // over as soon as the first shape is done
  const auto out = run_suite(w, f.config, m, o, stop);
  EXPECT_EQ(out.measured, 1);
  EXPECT_NE(out.stopped_because.find("--max-minutes"), std::string::npos);
}

// With --max-minutes, a shape that the recorded shapes say would outlast the
// minutes left is not started (it would be cut short, its minutes lost): the
// sweep stops before it, and the next run starts there.
TEST(BenchSuite, AShapeThatWouldOutlastTheMinutesLeftIsNotStarted) {
  Fixture f("suite-fits");
  // Shapes bound by their FLOP on the records' device (the synthetic H200), so
  // that the clock's roofline time grows as the work: sizes of 4096 and 8192.
  f.o.sizes = {4096, 8192};
  f.config = testing::synthetic_config(f.o);
  std::atomic<bool> stop{false};
  // 100 s per 4096^3 of work, the shapes in file order: 4096x4096x4096, 4096x4096x8192 and
  // 4096x8192x4096 take 100, 200 and 200 s; 4096x8192x8192 400 s; 8192x4096x4096 200 s; the
  // other three 400, 400 and 800 s.
  const double unit = task_from_shape("4096x4096x4096").flops();
  FakeMeasurer m(f.o);
  m.wall_s = [&](const Task& t) { return 100 * t.flops() / unit; };
  SuiteOptions o = quiet();
  o.max_minutes = 5;  // the fake takes no time: 300 s are left before each shape
  {
    RunWriter w(f.dir, f.config);
    const auto out = run_suite(w, f.config, m, o, stop);
    // Three recorded before the time of one can be told; then 4096x8192x8192 is
    // passed over and the smaller 8192x4096x4096 after it still fits.
    EXPECT_EQ(m.shapes,
              (std::vector<std::string>{"4096x4096x4096", "4096x4096x8192", "4096x8192x4096", "8192x4096x4096"}));
    EXPECT_FALSE(out.complete);
    EXPECT_NE(out.stopped_because.find("4 shapes were not started, as they would not fit in the minutes left (the "
                                       "first: 4096x8192x8192 would take about 6.7 minutes (fitted to the 3 shapes "
                                       "recorded) and 5.0 were left)"),
              std::string::npos)
        << out.stopped_because;
    EXPECT_EQ(out.stopped_because.find("; then"), std::string::npos) << out.stopped_because;  // nothing else stopped it
    // The four left (400 + 400 + 400 + 800 s by the line fitted to the four recorded) take about 33 minutes.
    EXPECT_NE(out.stopped_because.find("; the 4 shapes left would take about 33 minutes (fitted to the 4 shapes "
                                       "recorded), a guess for 1 of them, over 2x the largest shape recorded"),
              std::string::npos)
        << out.stopped_because;
  }
  // The next run starts with them; with an hour left, they fit too.
  FakeMeasurer again(f.o);
  again.wall_s = m.wall_s;
  o.max_minutes = 60;
  RunWriter w(f.dir, f.config);
  const auto out = run_suite(w, f.config, again, o, stop);
  EXPECT_TRUE(out.complete) << out.stopped_because;
  EXPECT_EQ(again.shapes,
            (std::vector<std::string>{"4096x8192x8192", "8192x4096x8192", "8192x8192x4096", "8192x8192x8192"}));
  EXPECT_EQ(load_run(f.dir).records.size(), f.config.tasks.size());
}

// Past the recorded sizes the fitted line is a guess (on an H200 it put two
// shapes 16 times the largest recorded at 5.5 minutes; they took 3.5): the
// messages say which estimates are.
TEST(BenchSuite, AnEstimatePastTheRecordedSizesSaysItIsAGuess) {
  Fixture f("suite-fits-beyond");
  f.o.sizes = {4096, 16384};  // in file order 1, 4, 4, 16, 4, 16, 16 and 64 units of 4096^3, FLOP-bound
  f.config = testing::synthetic_config(f.o);
  std::atomic<bool> stop{false};
  const double unit = task_from_shape("4096x4096x4096").flops();
  FakeMeasurer m(f.o);
  m.wall_s = [&](const Task& t) { return 100 * t.flops() / unit; };
  SuiteOptions o = quiet();
  o.max_minutes = 10;
  RunWriter w(f.dir, f.config);
  const auto out = run_suite(w, f.config, m, o, stop);
  EXPECT_EQ(m.shapes,
            (std::vector<std::string>{"4096x4096x4096", "4096x4096x16384", "4096x16384x4096", "16384x4096x4096"}));
  EXPECT_NE(out.stopped_because.find("the first: 4096x16384x16384 would take about 26.7 minutes (fitted to the 3 "
                                     "shapes recorded, each under half its size: a guess) and 10.0 were left"),
            std::string::npos)
      << out.stopped_because;
  EXPECT_NE(out.stopped_because.find("; the 4 shapes left would take about 187 minutes (fitted to the 4 shapes "
                                     "recorded), a guess for all 4 of them, over 2x the largest shape recorded (0.61 "
                                     "ms of roofline time)"),
            std::string::npos)
      << out.stopped_because;
}

// A shape part of which an earlier run kept (a search cut in its tune) needs
// only the rest: it is started where the whole would not fit.
TEST(BenchSuite, AShapeWhosePartAnEarlierRunKeptNeedsOnlyTheRest) {
  Fixture f("suite-fits-kept");
  f.o.sizes = {4096, 8192};  // FLOP-bound, as above
  f.config = testing::synthetic_config(f.o);
  std::atomic<bool> stop{false};
  const double unit = task_from_shape("4096x4096x4096").flops();  // as above: 4096x8192x8192 takes 400 s
  FakeMeasurer m(f.o);
  m.wall_s = [&](const Task& t) { return 100 * t.flops() / unit; };
  m.kept = [](const Task& t) { return t.shape() == "4096x8192x8192" ? 150.0 : 0.0; };
  SuiteOptions o = quiet();
  o.max_minutes = 5;
  RunWriter w(f.dir, f.config);
  run_suite(w, f.config, m, o, stop);
  EXPECT_EQ(m.shapes, (std::vector<std::string>{"4096x4096x4096", "4096x4096x8192", "4096x8192x4096", "4096x8192x8192",
                                                "8192x4096x4096"}));
}

// A shape in flight when the time limit falls is cut short (the measurer's
// evaluator refuses to go on, bench/deadline_evaluator.hpp): its partial
// figures are not recorded, the sweep stops, and a later run measures it.
TEST(BenchSuite, AShapeCutShortByTheTimeLimitIsNotRecorded) {
  Fixture f("suite-cut");
  std::atomic<bool> stop{false};
  bool cut = false;
  FakeMeasurer m(f.o);
  SuiteOptions o = quiet();
  o.max_minutes = 60;
  o.cut = [&] { return cut = cut || m.measured.size() == 3; };  // the limit falls inside the third shape
  {
    RunWriter w(f.dir, f.config);
    const auto out = run_suite(w, f.config, m, o, stop);
    EXPECT_EQ(out.measured, 2);
    EXPECT_FALSE(out.complete);
    EXPECT_NE(out.stopped_because.find("cut " + m.shapes[2] + " short"), std::string::npos)
        << out.stopped_because;
    EXPECT_EQ(out.stopped_because.find("alone"), std::string::npos) << "two shapes fit the limit";
  }
  EXPECT_EQ(load_run(f.dir).records.size(), 2u);
  // The next run measures the cut shape again first; cut inside it, it says
  // that the shape alone needs more than the limit.
  cut = false;
  FakeMeasurer again(f.o);
  o.cut = [&] { return true; };
  RunWriter w(f.dir, f.config);
  const auto out = run_suite(w, f.config, again, o, stop);
  ASSERT_EQ(again.measured.size(), 1u);
  EXPECT_EQ(again.measured[0], m.measured[2]);
  EXPECT_EQ(out.measured, 0);
  EXPECT_NE(out.stopped_because.find("alone needs a longer limit"), std::string::npos) << out.stopped_because;
  EXPECT_EQ(load_run(f.dir).records.size(), 2u);
  // Where the measurer kept a part of it (a search:N shape's search), the next run goes on from that.
  FakeMeasurer kept(f.o);
  kept.kept = [](const Task&) { return 90.0; };
  const auto kept_out = run_suite(w, f.config, kept, o, stop);
  EXPECT_NE(kept_out.stopped_because.find("; 1.5 minutes of it (its search, or the steps of it measured) are kept, "
                                          "and the next run goes on from them"),
            std::string::npos)
      << kept_out.stopped_because;
  EXPECT_EQ(kept_out.stopped_because.find("alone"), std::string::npos) << kept_out.stopped_because;
}

class CountingEvaluator final : public Evaluator {
public:
  EvalResult evaluate(const Candidate& c, const Task& t, const EvalOptions&) override {
    ++evaluated;
    EvalResult r;
    r.status = Status::ok;
    r.task = t;
    r.candidate_name = c.name;
    return r;
  }
  void compile_ahead(const Candidate&) override { ++compiled; }
  std::string describe() const override { return "counting"; }
  DeviceSummary device() const override { return {}; }
  int evaluated = 0, compiled = 0;
};

TEST(DeadlineEvaluator, PassesEverythingThroughUntilItsDeadlineThenRefusesAtOnce) {
  CountingEvaluator inner;
  DeadlineEvaluator ev(inner);
  const Task t = task_from_shape("64x64x64");
  Candidate c;
  c.name = "k";
  EXPECT_EQ(ev.evaluate(c, t, {}).status, Status::ok);  // no deadline set: no limit
  ev.set_deadline(DeadlineEvaluator::Clock::now() + std::chrono::hours(1));
  EXPECT_EQ(ev.evaluate(c, t, {}).status, Status::ok);
  ev.compile_ahead(c);
  EXPECT_FALSE(ev.cut());
  EXPECT_EQ(inner.evaluated, 2);
  EXPECT_EQ(inner.compiled, 1);
  ev.set_deadline(DeadlineEvaluator::Clock::now() - std::chrono::seconds(1));
  const EvalResult r = ev.evaluate(c, t, {});
  EXPECT_EQ(r.status, Status::infra_error) << "the machine's time ran out, not the candidate: masked";
  EXPECT_NE(r.reason.find("--max-minutes"), std::string::npos) << r.reason;
  EXPECT_EQ(r.candidate_name, "k");
  ev.compile_ahead(c);
  EXPECT_TRUE(ev.cut());
  EXPECT_EQ(inner.evaluated, 2) << "nothing reaches the GPU after the deadline";
  EXPECT_EQ(inner.compiled, 1) << "nor the compiler";
}

// Two sweeps of one task list sharing a claims folder, as the children of
// --gpus: no shape measured by both, the second complete with what the first
// left, and a claim taken once only.
TEST(BenchSuite, ClaimedTasksAreMeasuredByOneSweepEach) {
  Fixture f("suite-claims");
  const auto claims_dir = f.dir / "claims";
  std::filesystem::create_directories(claims_dir);
  const TaskClaims claims(claims_dir);
  SuiteOptions o = quiet();
  o.claim = [&claims](const Task& t) { return claims.claim(t); };
  std::atomic<bool> stop{false};
  // The first sweep stops after three shapes (holding a fourth claimed, as a
  // sweep claims the next shape before it measures the current one).
  RunWriter w1(f.dir / "a", f.config);
  FakeMeasurer m1(f.o);
  m1.stop_after = 3;
  m1.stop_flag = &stop;
  const auto a = run_suite(w1, f.config, m1, o, stop);
  EXPECT_FALSE(a.complete);
  EXPECT_EQ(a.measured, 3);
  stop = false;
  RunWriter w2(f.dir / "b", f.config);
  FakeMeasurer m2(f.o);
  const auto b = run_suite(w2, f.config, m2, o, stop);
  EXPECT_TRUE(b.complete) << "every shape the first did not claim";
  EXPECT_EQ(b.measured, 4);
  EXPECT_EQ(b.claimed_elsewhere, 4);
  std::set<std::string> seen;
  for (const auto* m : {&m1, &m2})
    for (const auto& id : m->measured) EXPECT_TRUE(seen.insert(id).second) << id << " measured twice";
  EXPECT_EQ(seen.size(), 7u) << "the fourth claim of the stopped sweep is left for the next session";
  EXPECT_FALSE(claims.claim(f.config.tasks.front()));
  std::filesystem::remove_all(claims_dir);
  EXPECT_FALSE(claims.claim(f.config.tasks.front())) << "a session's folder gone: no more work taken";
  EXPECT_THROW(TaskClaims(f.dir / "none"), Error);
}

TEST(BenchProgress, EtaWeighsEachBucketByItsOwnPace) {
  std::FILE* sink = std::tmpfile();
  SweepProgress p(sink, 10, 2, {{"small", 5}, {"large", 3}});
  EXPECT_LT(p.eta_seconds(), 0);
  testing::SyntheticOptions o;
  ShapeRecord small = testing::synthetic_record(task_from_shape("64x64x64"), default_buckets(), o);
  small.wall_s = 1.0;
  p.shape_done(small);  // 4 small left at 1 s; large unknown: the overall pace (1 s)
  EXPECT_DOUBLE_EQ(p.eta_seconds(), 4 * 1.0 + 3 * 1.0);
  ShapeRecord large = testing::synthetic_record(task_from_shape("8192x8192x8192"), default_buckets(), o);
  large.wall_s = 10.0;
  p.shape_done(large);  // 4 small at 1 s, 2 large at 10 s
  EXPECT_DOUBLE_EQ(p.eta_seconds(), 4 * 1.0 + 2 * 10.0);
  EXPECT_NE(p.text().find("4/10 shapes"), std::string::npos) << p.text();
  EXPECT_NE(p.text().find("ETA 24s"), std::string::npos) << p.text();
  EXPECT_NE(p.text().find("last 8192x8192x8192"), std::string::npos) << p.text();
  std::fclose(sink);
  EXPECT_EQ(format_duration(45), "45s");
  EXPECT_EQ(format_duration(372), "6m12s");
  EXPECT_EQ(format_duration(7500), "2h05m");
}

}  // namespace
}  // namespace tessera::bench
