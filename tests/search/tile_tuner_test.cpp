// The tile tuner against an evaluator double whose kernel time is a known
// function of the config: what it measures, with which options, and what it
// reports.
#include <gtest/gtest.h>

#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "tile/cost_model.hpp"
#include "search/tile_tuner.hpp"

namespace tessera::search {
namespace {

struct Call {
  std::string name;
  EvalOptions options;
};

// Kernel time: smaller tiles are faster on the test shape, split-K is slower;
// configs whose stage count is odd fail verification (a multiple of 3 used to, until the
// shortlist's one-wave grids went row-major and no such config came into a sweep of 24).
class TimedByConfig final : public Evaluator {
public:
  EvalResult evaluate(const Candidate& c, const Task& task, const EvalOptions& o) override {
    calls.push_back({c.name, o});
    const tile::Config cfg = tile::from_json(c.meta.at("tile_config"));
    EvalResult r;
    r.task = task;
    r.candidate_name = c.name;
    if (o.compile_only) {
      r.status = Status::compiled;
      return r;
    }
    if (fails(cfg)) {
      r.status = Status::wrong_answer;
      r.reason = "fake mismatch";
      return r;
    }
    r.status = Status::ok;
    r.cold.status = "measured";
    r.cold.median_us = time_us(cfg);
    if (o.baselines) {
      r.best_baseline = "fake_cublas";
      r.best_baseline_us = 10.0;
      r.speedup = r.best_baseline_us / r.cold.median_us;
    }
    return r;
  }
  // The tuner compiles the first candidate of a batch at once and the others
  // ahead, on its own threads, while it evaluates.
  void precompile(const std::vector<Candidate>& cands) override {
    std::lock_guard g(mu);
    precompiled.push_back(cands.size());
  }
  void compile_ahead(const Candidate& c) override {
    std::lock_guard g(mu);
    compiled_ahead.insert(c.name);
  }
  std::string describe() const override { return "timed-by-config double"; }
  DeviceSummary device() const override { return {}; }

  static bool fails(const tile::Config& c) {
    return c.stages % 2 == 1;
  }
  static double time_us(const tile::Config& c) {
    return 1.0 + (c.bm * c.bn) / 4096.0 + 0.5 * c.split_k + (c.backend == tile::Backend::mma_sync ? 3.0 : 0.0) +
           0.01 * c.stages;
  }
  std::vector<Call> calls;
  std::mutex mu;
  std::vector<std::size_t> precompiled;  // candidates per precompile() call
  std::set<std::string> compiled_ahead;
};

const Task kTask = task_from_shape("512x512x512");

TileTuneOptions with_budget(int budget) {
  TileTuneOptions o;
  o.budget = budget;
  return o;
}

TEST(TileTuner, SweepSkipsBaselinesAndTheConfirmationTimesThemWithCounters) {
  TimedByConfig ev;
  TileTuneOptions o = with_budget(12);
  const auto out = tune_tile(ev, kTask, tile::Limits{}, o);
  ASSERT_EQ(ev.calls.size(), 15u) << "12 sweep evaluations and three confirmations";
  std::set<std::string> swept;
  for (std::size_t i = 0; i < 12; ++i) {
    EXPECT_FALSE(ev.calls[i].options.baselines) << ev.calls[i].name;
    EXPECT_FALSE(ev.calls[i].options.counters) << ev.calls[i].name;
    EXPECT_FALSE(ev.calls[i].options.hot) << ev.calls[i].name << ": the sweep ranks by cold time only";
    swept.insert(ev.calls[i].name);
  }
  // One candidate compiled up front per batch; whatever was compiled ahead was then measured.
  ASSERT_FALSE(ev.precompiled.empty());
  for (std::size_t n : ev.precompiled) EXPECT_EQ(n, 1u);
  for (const auto& name : ev.compiled_ahead) EXPECT_TRUE(swept.count(name)) << name << " compiled, never measured";
  ASSERT_TRUE(out.confirmed());
  ASSERT_EQ(out.confirmations.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    const Call& confirm = ev.calls[12 + i];
    EXPECT_TRUE(confirm.options.baselines);
    EXPECT_TRUE(confirm.options.counters);
    EXPECT_TRUE(confirm.options.hot);
    // The sweep's three fastest, in order; the winner is the sweep's fastest.
    EXPECT_EQ(confirm.name, out.evaluated[i].name);
    EXPECT_EQ(out.confirmations[i].name, out.evaluated[i].name);
    EXPECT_GT(out.confirmations[i].result.speedup, 0);
  }
  EXPECT_EQ(out.best().name, out.evaluated.front().name);
  EXPECT_EQ(out.best().result.best_baseline, "fake_cublas");
  EXPECT_GT(out.best().result.speedup, 0);
  EXPECT_EQ(out.plan, "model + explore + refine");
}

TEST(TileTuner, ConfirmTopOneReMeasuresOnlyTheWinner) {
  TimedByConfig ev;
  TileTuneOptions o = with_budget(6);
  o.confirm_top = 1;
  const auto out = tune_tile(ev, kTask, tile::Limits{}, o);
  EXPECT_EQ(ev.calls.size(), 7u);
  ASSERT_EQ(out.confirmations.size(), 1u);
  EXPECT_EQ(out.best().name, out.confirmations.front().name);
}

TEST(TileTuner, SweepBaselinesOptionTimesThemWithEveryConfig) {
  TimedByConfig ev;
  TileTuneOptions o = with_budget(6);
  o.sweep_baselines = true;
  tune_tile(ev, kTask, tile::Limits{}, o);
  for (const auto& c : ev.calls) EXPECT_TRUE(c.options.baselines) << c.name;
}

TEST(TileTuner, WinnerIsTheFastestOkConfigAndFailuresAreCounted) {
  TimedByConfig ev;
  TileTuneOptions o = with_budget(24);
  const auto out = tune_tile(ev, kTask, tile::Limits{}, o);
  ASSERT_EQ(out.evaluated.size(), 24u);
  double fastest = 1e9;
  int failed = 0;
  for (const auto& e : out.evaluated) {
    if (e.result.status == Status::ok) fastest = std::min(fastest, e.result.cold.median_us);
    else ++failed;
  }
  EXPECT_GT(failed, 0) << "the double fails every config of an odd stage count; the sweep should hold one";
  EXPECT_EQ(out.failures, failed);
  EXPECT_EQ(out.evaluated.front().result.cold.median_us, fastest) << "fastest first";
  EXPECT_EQ(out.best().name, out.evaluated.front().name);
  EXPECT_FALSE(TimedByConfig::fails(out.best().config)) << "a config that failed verification was picked";
  // Ok results come before failures in the listing.
  bool seen_failure = false;
  for (const auto& e : out.evaluated) {
    if (e.result.status != Status::ok) seen_failure = true;
    else EXPECT_FALSE(seen_failure) << e.name << " listed after a failure";
  }
}

// `tile tune --rows`: every config the sweep timed is a training row, with
// the sweep's cold time; failures and the confirmations' re-measurements are not.
TEST(TileTuner, TheSweepsTimedConfigsAreTrainingRows) {
  TimedByConfig ev;
  const auto out = tune_tile(ev, kTask, tile::Limits{}, with_budget(24));
  const auto rows = tune_rows(out, tile::Limits{}, "h200");
  ASSERT_EQ(rows.size(), out.evaluated.size() - std::size_t(out.failures));
  std::set<std::string> names;
  for (const auto& m : rows) {
    EXPECT_FALSE(TimedByConfig::fails(m.config)) << tile::name(m.config);
    EXPECT_DOUBLE_EQ(m.cold_us, TimedByConfig::time_us(m.config)) << "the sweep's time, not a confirmation's";
    EXPECT_EQ(m.device_kind, "h200");
    EXPECT_EQ(m.task.id(), kTask.id());
    names.insert(tile::name(m.config));
    // What train reads back from the file.
    const tile::Measurement back = tile::measurement_from_json(tile::to_json(m));
    EXPECT_EQ(tile::name(back.config), tile::name(m.config));
    EXPECT_DOUBLE_EQ(back.cold_us, m.cold_us);
    EXPECT_EQ(back.device_kind, "h200");
  }
  EXPECT_EQ(names.size(), rows.size()) << "one row per config";

  TileTuneOptions o = with_budget(4);
  o.compile_only = true;
  EXPECT_TRUE(tune_rows(tune_tile(ev, kTask, tile::Limits{}, o), tile::Limits{}, "h200").empty())
      << "nothing timed, no rows";
}

TEST(TileTuner, RefineMeasuresNeighboursOfTheFastest) {
  TimedByConfig ev;
  TileTuneOptions o = with_budget(30);
  o.refine = 0.5;
  const auto out = tune_tile(ev, kTask, tile::Limits{}, o);
  // The explore half is the first 15 calls; every later config differs from
  // some earlier one in exactly one knob (dependent knobs aside).
  const auto space = tune_space(kTask, tile::Limits{}, "");
  std::vector<tile::Config> earlier;
  for (std::size_t i = 0; i < 15; ++i) earlier.push_back(tile::parse_config(ev.calls[i].name));
  int refined = 0;
  for (std::size_t i = 15; i < 30; ++i) {  // then come the confirmations
    const tile::Config c = tile::parse_config(ev.calls[i].name);
    bool neighbour = false;
    for (const auto& e : earlier)
      for (const auto& n : tile::neighbours(e, space, kTask, tile::Limits{})) neighbour |= tile::name(n) == tile::name(c);
    refined += neighbour;
    earlier.push_back(c);
  }
  EXPECT_EQ(refined, 15) << "every refine config is a one-knob neighbour of a measured one";
  EXPECT_EQ(out.evaluated.size(), 30u);
  // Each config says how the tune came to it: the explore half from the
  // model's order, samples and seeds, the rest from refine.
  for (const auto& e : out.evaluated) {
    if (e.order >= 15) EXPECT_EQ(e.move, "refine") << e.order;
    else if (e.order < kModelFirst) EXPECT_EQ(e.move, "model") << e.order;
    else EXPECT_TRUE(e.move == "model" || e.move == "sample" || e.move == "seed") << e.order << " " << e.move;
  }
}

TEST(TileTuner, SameSeedSameSequence) {
  TimedByConfig a, b, c;
  TileTuneOptions o = with_budget(16);
  tune_tile(a, kTask, tile::Limits{}, o);
  tune_tile(b, kTask, tile::Limits{}, o);
  o.seed = 2;
  tune_tile(c, kTask, tile::Limits{}, o);
  auto names = [](const TimedByConfig& e) {
    std::vector<std::string> n;
    for (const auto& call : e.calls) n.push_back(call.name);
    return n;
  };
  EXPECT_EQ(names(a), names(b));
  EXPECT_NE(names(a), names(c));
}

TEST(TileTuner, CompileOnlyConfirmsNothingAndBackendFilters) {
  TimedByConfig ev;
  TileTuneOptions o = with_budget(5);
  o.compile_only = true;
  o.backend = "mma_sync";
  const auto out = tune_tile(ev, kTask, tile::Limits{}, o);
  EXPECT_FALSE(out.confirmed());
  EXPECT_EQ(ev.calls.size(), 5u);
  for (const auto& c : ev.calls) {
    EXPECT_TRUE(c.options.compile_only);
    EXPECT_EQ(tile::parse_config(c.name).backend, tile::Backend::mma_sync) << c.name;
  }
  o.backend = "tensor_cores";
  EXPECT_THROW(tune_tile(ev, kTask, tile::Limits{}, o), Error);
}

TEST(TileTuner, TheFirstConfigsAreTheCostModelsBest) {
  TimedByConfig ev;
  TileTuneOptions o = with_budget(24);
  const auto out = tune_tile(ev, kTask, tile::Limits{}, o);
  // The tune ranks with the learned model stored for the device's kind (or transferred), as the search does.
  const tile::LearnedModel learned = tile::model_for_device(tile::device_kind(ev.device().name));
  const auto ranking = tile::rank_configs(kTask, tile::Limits{}, kModelFirst, learned);
  ASSERT_EQ(ranking.size(), std::size_t(kModelFirst));
  for (int i = 0; i < kModelFirst; ++i) EXPECT_EQ(ev.calls[i].name, tile::name(ranking[i].config)) << i;
  // The report: the model's first pick and where the winner stood in its order.
  const ModelCheck& m = out.model;
  EXPECT_TRUE(m.ranked);
  EXPECT_EQ(m.first_pick, tile::name(ranking[0].config));
  EXPECT_DOUBLE_EQ(m.first_pick_predicted_us, ranking[0].prediction.time_us);
  const bool failed = TimedByConfig::fails(ranking[0].config);  // the double's wrong answers
  EXPECT_DOUBLE_EQ(m.first_pick_measured_us, failed ? 0.0 : TimedByConfig::time_us(ranking[0].config));
  EXPECT_GE(m.winner_rank, 1);
  EXPECT_DOUBLE_EQ(m.winner_measured_us, out.evaluated.front().result.cold.median_us);
  // The winner's place and prediction by the model that ranked the sweep, as the first pick's are.
  EXPECT_EQ(m.winner_rank, tile::model_rank(tile::rank_configs(kTask, tile::Limits{}, std::size_t(-1), learned),
                                            out.evaluated.front().config, kTask, tile::Limits{}, learned));
  EXPECT_DOUBLE_EQ(m.winner_predicted_us,
                   tile::predict_all({out.evaluated.front().config}, kTask, tile::Limits{}, learned).front().time_us);
  // Without the learned model: the analytical order.
  TimedByConfig plain;
  TileTuneOptions po = with_budget(kModelFirst);
  po.learned = false;
  tune_tile(plain, kTask, tile::Limits{}, po);
  const auto analytical = tile::rank_configs(kTask, tile::Limits{}, kModelFirst);
  for (int i = 0; i < kModelFirst; ++i) EXPECT_EQ(plain.calls[i].name, tile::name(analytical[i].config)) << i;
  EXPECT_GE(m.from_model, kModelFirst);
  // With a budget of kModelFirst, the tune is the model's top picks and nothing else.
  TimedByConfig top;
  const auto only = tune_tile(top, kTask, tile::Limits{}, with_budget(kModelFirst));
  EXPECT_EQ(only.model.from_model, kModelFirst);
  for (int i = 0; i < kModelFirst; ++i) EXPECT_EQ(top.calls[i].name, tile::name(ranking[i].config)) << i;
}

TEST(TileTuner, ProgressReportsEveryMeasurementAndTheBestTime) {
  TimedByConfig ev;
  TileTuneOptions o = with_budget(8);
  std::vector<int> done;
  double last_best_us = 0, last_speedup = -1;
  const auto out = tune_tile(ev, kTask, tile::Limits{}, o, [&](int d, int total, double speedup, double us) {
    done.push_back(d);
    EXPECT_EQ(total, 8);
    last_best_us = us;
    last_speedup = speedup;
  });
  EXPECT_EQ(done, (std::vector<int>{1, 2, 3, 4, 5, 6, 7, 8}));
  EXPECT_EQ(last_speedup, 0) << "the sweep timed no baselines";
  EXPECT_DOUBLE_EQ(last_best_us, out.evaluated.front().result.cold.median_us);
}

}  // namespace
}  // namespace tessera::search
