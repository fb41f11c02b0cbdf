// `--kernels search:N[:evolve|bandit][:alone]` (bench/kernels.hpp): per shape,
// a search of N evaluations with the tile proposer (search/engine.hpp),
// under the protocol of tile:N: every config is measured once, cold (no
// noise-aware re-measurement, no hot timing, no counters, so the budgets are
// equal), and the search's best is measured again with the baselines
// interleaved and counters; that confirmation is the shape's figure. Unless `alone`, the tile tuner runs on
// the same shape at the same budget in the same worker, and its confirmed
// figure sits beside the search's (kernel.tune.tile): search against tune
// in one command.
//
// A search the time limit did not cut is kept until its shape is recorded
// (<task id>.kept.json, in work or the folder given): the largest shapes of
// the grid outlast one call of a lent GPU (16384x12288x16384 ran past nine
// minutes on an H200), and a shape cut in its tune starts again from its
// search, not from nothing. A search cut itself (<task id>.searching stays
// beside it) goes on from its measured steps (bench/detail/partial_search.hpp).
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <memory>
#include <tuple>
#include <utility>

#include <fmt/format.h>

#include "agent/registry.hpp"
#include "bench/detail/partial_search.hpp"
#include "bench/detail/sweep_log.hpp"
#include "bench/measure.hpp"
#include "core/error.hpp"
#include "core/fs.hpp"
#include "core/json_struct.hpp"
#include "search/engine.hpp"
#include "search/report.hpp"
#include "search/tile_tuner.hpp"
#include "tile/legality.hpp"

namespace tessera::bench {

namespace {

constexpr std::uint64_t kSearchSeed = 1;  // the same stream for every shape, as tile:N's tuner seed

// A finished search, on disk while its shape waits for its tune.
struct KeptSearch {
  nlohmann::json best;     // tile::to_json of the search's best; null when none verified
  nlohmann::json summary;  // sweep_of_search
  std::string note;
  double seconds = 0;      // the search's wall time, which the shape's then includes
};
TESSERA_JSON_STRUCT(KeptSearch, best, summary, note, seconds)

// The suite's evaluator lent to a search, which owns its evaluators.
class Borrowed final : public Evaluator {
public:
  explicit Borrowed(Evaluator& e) : e_(e) {}
  EvalResult evaluate(const Candidate& c, const Task& t, const EvalOptions& o) override { return e_.evaluate(c, t, o); }
  void precompile(const std::vector<Candidate>& c) override { e_.precompile(c); }
  void compile_ahead(const Candidate& c) override { e_.compile_ahead(c); }
  std::string describe() const override { return e_.describe(); }
  DeviceSummary device() const override { return e_.device(); }
  void start() override { e_.start(); }

private:
  Evaluator& e_;
};

EvalOptions confirm_options(bool compile_only) {
  EvalOptions o;
  o.compile_only = compile_only;
  o.counters = true;
  o.baselines = true;
  o.hot = true;
  return o;
}

class SearchMeasurer final : public ShapeMeasurer {
public:
  SearchMeasurer(Evaluator& ev, const KernelSource& source, const MeasureSettings& s, std::filesystem::path work,
                 std::function<bool()> cut, std::filesystem::path kept)
      : ev_(ev), source_(source), settings_(s), work_(std::move(work)), cut_(std::move(cut)),
        kept_(kept.empty() ? work_ : std::move(kept)) {}

  ShapeRecord measure(const Task& task, const std::string& bucket) override {
    const auto t0 = std::chrono::steady_clock::now();
    ev_.start();
    // The device as the shape starts: the tune ranks with its limits, as the
    // search's first proposals do. The search's baseline timings may raise
    // the stored peak before the tune runs (H200: on 4 of 67 shapes, each
    // GPU's first, the two then started from different configs).
    const DeviceSummary device = ev_.device();
    ShapeRecord r = start_record(task, bucket, device);
    nlohmann::json comparison = nlohmann::json::object();
    const auto searched = search_or_kept(task);
    comparison["search"] = searched.summary;
    if (searched.best) {
      const Candidate c = search::tile_candidate(*searched.best, task);
      r.kernel = KernelOutcome{tile::name(*searched.best), "", ev_.evaluate(c, task, confirm_options(settings_.compile_only)),
                               nullptr};
    } else {
      r.note = searched.note;
    }
    if (!source_.alone) comparison["tile"] = run_tune(task, device);
    if (r.kernel) r.kernel->tune = std::move(comparison);
    finish_record(r, t0);
    r.wall_s += searched.earlier_seconds;
    // Measured whole: the suite records it. Cut, it is not, and the kept search waits for the next run.
    if (!was_cut()) {
      std::error_code ec;
      std::filesystem::remove(kept_path(task), ec);
    }
    return r;
  }

  double seconds_kept(const Task& task) const override {
    if (const auto kept = read_kept(task)) return kept->earlier_seconds;
    std::error_code ec;
    if (!std::filesystem::exists(searching_path(task), ec)) return 0;
    return detail::measured_steps(std::filesystem::exists(work_ / task.id(), ec) ? work_ / task.id() : kept_ / task.id())
        .seconds;
  }

  std::string describe() const override {
    return fmt::format("searched ({}), {} evaluations per shape{}, {}", source_.method, source_.budget,
                       source_.alone ? "" : ", beside tile-tuned at the same budget", ev_.describe());
  }

private:
  struct Searched {
    std::optional<tile::Config> best;
    nlohmann::json summary = nlohmann::json::object();
    std::string note;
    double earlier_seconds = 0;  // kept from an earlier run: the time it took there
  };

  bool was_cut() const { return cut_ && cut_(); }
  std::filesystem::path kept_path(const Task& task) const { return kept_ / (task.id() + ".kept.json"); }
  // There while the shape's search runs: left behind, the search was cut (or its process killed).
  std::filesystem::path searching_path(const Task& task) const { return kept_ / (task.id() + ".searching"); }

  // The search kept for `task`, as the shape's search; nullopt when there is
  // none, or it does not read (torn, hand-edited, another version, a config
  // that does not parse): then it is searched again (and replaced), never trusted.
  std::optional<Searched> read_kept(const Task& task) const {
    const auto path = kept_path(task);
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) return std::nullopt;
    try {
      const auto kept = nlohmann::json::parse(read_file(path)).get<KeptSearch>();
      if (!kept.summary.is_object() || !(kept.best.is_null() || kept.best.is_object())) return std::nullopt;
      Searched out{std::nullopt, kept.summary, kept.note, kept.seconds};
      if (kept.best.is_object()) out.best = tile::from_json(kept.best);
      // Its sweep was timed in another process, perhaps on another GPU:
      // search_vs_tune leaves it out of the comparison of the two timings.
      out.summary["kept_from_earlier_run"] = true;
      return out;
    } catch (const std::exception&) {
      return std::nullopt;
    }
  }

  // The search kept from an earlier run that the time limit cut after it,
  // else a new one, kept when the limit did not cut it.
  Searched search_or_kept(const Task& task) {
    if (auto kept = read_kept(task)) {
      std::fprintf(stderr, "\nbench: %s: the search kept from an earlier run (cut at the time limit after it)\n",
                   task.shape().c_str());
      return std::move(*kept);
    }
    const auto t0 = std::chrono::steady_clock::now();
    Searched out = run_search(task);
    if (!was_cut()) {
      KeptSearch kept{out.best ? tile::to_json(*out.best) : nlohmann::json(), out.summary, out.note,
                      out.earlier_seconds + std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()};
      atomic_write_file(kept_path(task), nlohmann::json(kept).dump());
      std::error_code ec;
      std::filesystem::remove(searching_path(task), ec);
    }
    return out;
  }

  // The shape's search folder, fresh; or, where a cut left a search
  // (<task id>.searching), that search cut to its measured steps, which the
  // engine replays. A search of a shape recorded before (--retry) starts afresh.
  detail::MeasuredSteps prepare_search_dir(const Task& task, const std::filesystem::path& dir) {
    std::error_code ec;
    std::filesystem::create_directories(kept_);
    if (!std::filesystem::exists(searching_path(task), ec)) {
      std::filesystem::remove_all(dir);
      atomic_write_file(searching_path(task), "");
      return {};
    }
    // A --gpus child's search goes to the run's folder when the child ends: the next child takes it back.
    const auto left = kept_ / task.id();
    if (left != dir && std::filesystem::exists(left, ec)) {
      std::filesystem::remove_all(dir, ec);
      std::filesystem::create_directories(dir.parent_path(), ec);
      std::filesystem::rename(left, dir, ec);  // where it fails, the search starts afresh in dir
    }
    return detail::keep_measured_steps(dir);
  }

  Searched run_search(const Task& task) {
    search::SearchConfig config;
    config.method = source_.method;
    config.seed = kSearchSeed;
    config.budget.evals = source_.budget;
    config.noise_aware = false;  // N configs measured once each, as tile:N measures them
    config.reuse_baselines = settings_.reuse_baselines;
    config.compile_only = settings_.compile_only;
    config.counter_set = "fast";
    config.proposers = {"tile"};
    config.run_id = "bench-" + task.id();
    const auto dir = work_ / task.id();
    detail::MeasuredSteps resumed = prepare_search_dir(task, dir);
    if (resumed.steps > 0)
      std::fprintf(stderr, "\nbench: %s: the search goes on from the %lld steps an earlier run measured before it "
                   "was cut\n", task.shape().c_str(), resumed.steps);
    const auto run_engine = [&] {
      agent::ProposerOptions po;
      po.seed = kSearchSeed;
      po.arch = ev_.device().arch;
      std::vector<search::ProposerSlot> slots;
      for (auto& built : agent::ProposerRegistry::builtin().build_all({"tile"}, po))
        slots.push_back(search::make_slot(std::move(built)));
      std::vector<std::unique_ptr<Evaluator>> evaluators;
      evaluators.push_back(std::make_unique<Borrowed>(ev_));
      search::EngineOptions eo;
      eo.run_dir = dir;
      // The search's population ranks kernels by their speedup, so its
      // evaluations time the baselines (tile:N's sweep does not): the budgets
      // are equal in configs measured, not in GPU time. With reuse_baselines
      // only a shape's first evaluation times them, and the search ranks by
      // cold time under the tune's conditions.
      eo.eval.baselines = true;
      eo.eval.hot = false;
      eo.eval.counters = false;
      auto engine = std::make_unique<search::SearchEngine>(config, std::vector<Task>{task}, std::move(slots),
                                                           std::move(evaluators), eo);
      search::RunSummary summary = engine->run();
      return std::make_pair(std::move(engine), std::move(summary));
    };
    std::unique_ptr<search::SearchEngine> engine;
    search::RunSummary summary;
    try {
      std::tie(engine, summary) = run_engine();
    } catch (const Error& e) {
      // The engine refuses logs of another search (the code's decisions
      // changed between the two runs) before it evaluates anything.
      if (resumed.steps == 0 || e.kind() != Error::Kind::bad_input) throw;
      std::fprintf(stderr, "\nbench: %s: the earlier run's search does not go on here (%s): searched afresh\n",
                   task.shape().c_str(), e.what());
      std::filesystem::remove_all(dir);
      resumed = {};
      std::tie(engine, summary) = run_engine();
    }
    Searched out;
    const auto& ts = engine->state().task(0);
    std::map<std::string, nlohmann::json> info;
    for (const auto& rec : search::load_run(dir).records)
      if (rec.contains("candidate") && rec["candidate"].contains("name"))
        info[rec["candidate"]["name"].get<std::string>()] = rec.value("proposer_info", nlohmann::json::object());
    out.summary = sweep_of_search(ts, summary.stop_reason, info);
    if (resumed.steps > 0) {
      // Timed partly in another process: search_vs_tune leaves it out of
      // the comparison of the two timings, as it does a kept search.
      out.summary["kept_from_earlier_run"] = true;
      out.summary["resumed_steps"] = resumed.steps;
      out.earlier_seconds = resumed.seconds;
    }
    if (ts.best && ts.best->candidate.meta.contains("tile_config"))
      out.best = tile::from_json(ts.best->candidate.meta.at("tile_config"));
    else
      out.note = settings_.compile_only ? "compile-only: nothing timed" : "no config of the search verified";
    return out;
  }

  nlohmann::json run_tune(const Task& task, const DeviceSummary& device) {
    search::TileTuneOptions o;
    o.budget = source_.budget;
    o.confirm_top = 1;
    o.compile_only = settings_.compile_only;
    try {
      const auto outcome = search::tune_tile(ev_, task, tile::with_device(tile::Limits{}, device), o);
      nlohmann::json j = sweep_of_tune(outcome);
      if (outcome.confirmed()) j["confirmed"] = confirmed_json(outcome.best().name, outcome.best().result);
      return j;
    } catch (const Error& e) {
      if (e.kind() != Error::Kind::bad_input) throw;
      return {{"note", e.what()}};
    }
  }

  Evaluator& ev_;
  KernelSource source_;
  MeasureSettings settings_;
  std::filesystem::path work_;
  std::function<bool()> cut_;
  std::filesystem::path kept_;  // where kept searches are: work_, or a --gpus run's own search/
};

}  // namespace

std::unique_ptr<ShapeMeasurer> make_search_measurer(Evaluator& evaluator, const KernelSource& source,
                                                    const MeasureSettings& settings, const std::filesystem::path& work,
                                                    std::function<bool()> cut, const std::filesystem::path& kept) {
  return std::make_unique<SearchMeasurer>(evaluator, source, settings, work, std::move(cut), kept);
}

}  // namespace tessera::bench
