// search:N's measurer: the tile tune beside the search ranks with the device
// as the shape started, whatever the search's baseline timings did to the
// stored peak meanwhile (the search's first proposals rank with that device
// too), so that both start from the same knowledge.
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "bench/kernels.hpp"
#include "bench/measure.hpp"
#include "core/task.hpp"
#include "harness/evaluator.hpp"
#include "tests/bench/synthetic.hpp"
#include "tests/testing.hpp"
#include "tile/cost_model.hpp"
#include "tile/learned_model.hpp"

namespace tessera::bench {
namespace {

constexpr double kPeakBefore = 400, kPeakAfter = 1600;  // TFLOP/s

// Times every candidate (a function of its name), and reports a higher
// peak once anything was timed, as a stored peak raised by a baseline
// measurement would read.
class PeakRaisingEvaluator final : public Evaluator {
public:
  EvalResult evaluate(const Candidate& candidate, const Task& task, const EvalOptions& options) override {
    ++calls;
    if (options.baselines) ++with_baselines;
    if (options.hot) ++confirmations;  // only the confirmation times hot
    EvalResult r;
    r.task = task;
    r.candidate_name = candidate.name;
    r.candidate_hash = candidate.name;
    r.mode = options.compile_only ? "compile_only" : "full";
    r.device = device();
    timed_ = true;
    const double us = 50.0 + double(std::hash<std::string>{}(candidate.name) % 1000) / 100.0;
    ::tessera::testing::mark_timed_ok(r, us);
    if (!options.baselines) return r;  // as the worker: no baselines, no speedup
    BaselineResult b{"cublas_tn", "fake", {}, ""};
    b.cold.median_us = 55.0;
    r.baselines = {b};
    r.best_baseline = "cublas_tn";
    r.best_baseline_us = 55.0;
    r.speedup = 55.0 / us;
    r.tflops = task.tflops_at(us);
    return r;
  }
  std::string describe() const override { return "peak-raising fake"; }
  std::atomic<int> calls{0}, with_baselines{0}, confirmations{0};
  DeviceSummary device() const override {
    DeviceSummary d;
    // Not a Hopper: a Hopper is ranked at its kind's peak (tile::with_device),
    // so only another architecture's measured peak moves the model's order.
    d.name = "NVIDIA L40S";
    d.sm_count = 142;
    d.arch = "sm_89";
    d.peak_tflops = timed_ ? kPeakAfter : kPeakBefore;
    return d;
  }

private:
  std::atomic<bool> timed_{false};
};

TEST(SearchMeasurer, TheTuneRanksWithTheDeviceTheShapeStartedOn) {
  const Task task = task_from_shape("4096x4096x4096");
  PeakRaisingEvaluator ev;
  const DeviceSummary before = ev.device();
  DeviceSummary after = before;
  after.peak_tflops = kPeakAfter;
  // The first pick's predicted time depends on the peak at this shape, so the test can tell the two apart.
  const auto model = tile::model_for_device(tile::device_kind(before.name));
  const auto first_before = tile::rank_configs(task, tile::with_device(tile::Limits{}, before), 1, model).at(0);
  const auto first_after = tile::rank_configs(task, tile::with_device(tile::Limits{}, after), 1, model).at(0);
  ASSERT_NE(first_before.prediction.time_us, first_after.prediction.time_us);

  const auto measurer = make_search_measurer(ev, parse_kernel_source("search:2:evolve"), MeasureSettings{},
                                             testing::fresh_dir("search_measurer_peak"));
  const ShapeRecord r = measurer->measure(task, "large");
  ASSERT_TRUE(r.kernel.has_value()) << r.note;
  ASSERT_EQ(ev.device().peak_tflops, kPeakAfter) << "the search timed something, so the peak read higher after it";
  const auto& check = r.kernel->tune.at("tile").at("model");
  EXPECT_EQ(check.at("first_pick").get<std::string>(), tile::name(first_before.config));
  EXPECT_DOUBLE_EQ(check.at("first_pick_predicted_us").get<double>(), first_before.prediction.time_us);
}

// --reuse-baselines: the search times the baselines on the shape's first
// evaluation only; the confirmation (the shape's figure) still times them.
TEST(SearchMeasurer, ReusedBaselinesAreTimedOnceBesideTheConfirmation) {
  const Task task = task_from_shape("1024x1024x1024");
  for (const bool reuse : {false, true}) {
    PeakRaisingEvaluator ev;
    MeasureSettings settings;
    settings.reuse_baselines = reuse;
    const auto measurer = make_search_measurer(ev, parse_kernel_source("search:6:evolve:alone"), settings,
                                               testing::fresh_dir(reuse ? "search_reuse" : "search_no_reuse"));
    const ShapeRecord r = measurer->measure(task, "medium");
    ASSERT_TRUE(r.kernel.has_value()) << r.note;
    EXPECT_GT(r.kernel->result.speedup, 0) << "the confirmation timed its baselines";
    EXPECT_FALSE(r.kernel->result.baselines.empty());
    const int searched = ev.calls - 1;  // the last call is the confirmation
    EXPECT_GE(searched, 6);
    EXPECT_EQ(ev.with_baselines, reuse ? 2 : searched + 1) << (reuse ? "reused" : "interleaved");
  }
}

// A search the time limit did not cut is kept until its shape is measured
// whole: a sweep cut in the shape's tune (or confirmation) starts it again
// from the kept search, which then is not searched again; a search the limit
// cut, or a kept file that does not read, is searched again.
TEST(SearchMeasurer, ASearchTheTimeLimitDidNotCutIsKeptForTheShapesNextRun) {
  const Task task = task_from_shape("1024x1024x1024");
  const auto source = parse_kernel_source("search:4:evolve:alone");
  const auto dir = testing::fresh_dir("search_measurer_kept");
  const auto kept = dir / (task.id() + ".kept.json");

  // The limit falls on the confirmation, after the search: the suite records nothing, the search is kept.
  PeakRaisingEvaluator first;
  const auto cut_measurer = make_search_measurer(first, source, MeasureSettings{}, dir,
                                                 [&first] { return first.confirmations > 0; });
  const ShapeRecord cut = cut_measurer->measure(task, "medium");
  ASSERT_TRUE(cut.kernel.has_value()) << cut.note;
  const int searched = first.calls - 1;
  ASSERT_GE(searched, 4);
  ASSERT_TRUE(std::filesystem::exists(kept));

  // The next run (not cut) confirms the kept search's best without searching, and counts its time.
  PeakRaisingEvaluator second;
  const auto measurer = make_search_measurer(second, source, MeasureSettings{}, dir, [] { return false; });
  const ShapeRecord whole = measurer->measure(task, "medium");
  ASSERT_TRUE(whole.kernel.has_value()) << whole.note;
  EXPECT_EQ(second.calls, 1) << "only the confirmation";
  EXPECT_EQ(whole.kernel->name, cut.kernel->name);
  const auto& search = whole.kernel->tune.at("search");
  EXPECT_TRUE(search.value("kept_from_earlier_run", false));
  EXPECT_EQ(search.at("sweep"), cut.kernel->tune.at("search").at("sweep"));
  EXPECT_GE(whole.wall_s, cut.wall_s * 0.5) << "the search's time is the shape's";
  EXPECT_FALSE(std::filesystem::exists(kept)) << "measured whole: the suite records it, the kept search goes";

  // Cut inside the search: nothing kept, and the next run goes on from the
  // search's steps (here the limit refused none of them: all replayed).
  PeakRaisingEvaluator cut_early;
  make_search_measurer(cut_early, source, MeasureSettings{}, dir, [] { return true; })->measure(task, "medium");
  EXPECT_FALSE(std::filesystem::exists(kept));
  PeakRaisingEvaluator again;
  make_search_measurer(again, source, MeasureSettings{}, dir, [] { return false; })->measure(task, "medium");
  EXPECT_EQ(again.calls, 1) << "its steps were measured: replayed, only the confirmation runs";

  // A kept file that does not read is not trusted: searched again.
  { std::ofstream(kept) << "{\"summary\": 7, \"best\": [1"; }
  PeakRaisingEvaluator torn;
  const ShapeRecord re = make_search_measurer(torn, source, MeasureSettings{}, dir, [] { return false; })
                             ->measure(task, "medium");
  ASSERT_TRUE(re.kernel.has_value()) << re.note;
  EXPECT_EQ(torn.calls, searched + 1);
  EXPECT_FALSE(re.kernel->tune.at("search").contains("kept_from_earlier_run"));
  EXPECT_FALSE(std::filesystem::exists(kept));
}

// Measures as the fake above until `measured` evaluations ran, then answers
// as the suite's deadline does: an infra_error at once, nothing measured.
class CutAfter final : public Evaluator {
public:
  explicit CutAfter(int measured) : left_(measured) {}
  EvalResult evaluate(const Candidate& candidate, const Task& task, const EvalOptions& options) override {
    if (left_-- > 0) return inner.evaluate(candidate, task, options);
    cut = true;
    EvalResult r;
    r.status = Status::infra_error;
    r.reason = "cut off at the time limit (--max-minutes)";
    r.fault = "infrastructure";
    r.task = task;
    r.candidate_name = candidate.name;
    r.mode = "full";
    return r;
  }
  std::string describe() const override { return "cut after some evaluations"; }
  DeviceSummary device() const override { return inner.device(); }
  PeakRaisingEvaluator inner;
  std::atomic<bool> cut{false};

private:
  std::atomic<int> left_;
};

// A search the time limit cut goes on in the next run from the steps it
// measured, and makes the decisions an uncut search makes: the steps the
// limit refused are run, the measured ones are not run again.
TEST(SearchMeasurer, ASearchTheTimeLimitCutGoesOnFromItsMeasuredSteps) {
  const Task task = task_from_shape("1024x1024x1024");
  const auto source = parse_kernel_source("search:16:bandit:alone");
  PeakRaisingEvaluator uncut_ev;
  const ShapeRecord uncut = make_search_measurer(uncut_ev, source, MeasureSettings{}, testing::fresh_dir("search_uncut"),
                                                 [] { return false; })
                                ->measure(task, "medium");
  ASSERT_TRUE(uncut.kernel.has_value()) << uncut.note;
  const int searched = uncut_ev.calls - 1;

  const auto dir = testing::fresh_dir("search_cut_in_search");
  CutAfter first(11);
  make_search_measurer(first, source, MeasureSettings{}, dir, [&first] { return first.cut.load(); })
      ->measure(task, "medium");
  ASSERT_TRUE(first.cut);
  EXPECT_FALSE(std::filesystem::exists(dir / (task.id() + ".kept.json"))) << "the search did not finish";
  ASSERT_TRUE(std::filesystem::exists(dir / (task.id() + ".searching")));

  PeakRaisingEvaluator second;
  const auto measurer = make_search_measurer(second, source, MeasureSettings{}, dir, [] { return false; });
  EXPECT_GT(measurer->seconds_kept(task), 0) << "the measured steps' time, for the suite's clock";
  const ShapeRecord resumed = measurer->measure(task, "medium");
  ASSERT_TRUE(resumed.kernel.has_value()) << resumed.note;
  const auto& search = resumed.kernel->tune.at("search");
  const long long kept_steps = search.at("resumed_steps").get<long long>();
  EXPECT_GE(kept_steps, 1);
  EXPECT_LE(kept_steps, 11) << "eleven evaluations measured at most eleven steps";
  EXPECT_LT(kept_steps, 16) << "the limit refused the rest";
  EXPECT_TRUE(search.value("kept_from_earlier_run", false)) << "timed partly in another process";
  EXPECT_EQ(second.calls, searched - kept_steps + 1) << "the measured steps are not measured again";
  EXPECT_EQ(resumed.kernel->name, uncut.kernel->name);
  const auto names = [](const nlohmann::json& sweep) {
    std::vector<std::string> out;
    for (const auto& e : sweep) out.push_back(e.at("name").get<std::string>());
    return out;
  };
  EXPECT_EQ(names(search.at("sweep")), names(uncut.kernel->tune.at("search").at("sweep")))
      << "the same configs, in the same order";
  EXPECT_FALSE(std::filesystem::exists(dir / (task.id() + ".searching")));
}

}  // namespace
}  // namespace tessera::bench
