// Kernel sweeps through an Evaluator (the sandbox worker, reused for every
// shape): kernel files, or the tile tuner per shape.
#include <chrono>
#include <future>
#include <map>
#include <mutex>

#include <fmt/format.h>

#include "bench/detail/sweep_log.hpp"
#include "bench/measure.hpp"
#include "core/error.hpp"
#include "core/fs.hpp"
#include "tile/legality.hpp"
#include "search/tile_tuner.hpp"

namespace tessera::bench {

namespace {

constexpr int kSweepTopRecorded = 3;  // the tile sweep's fastest configs kept in a record

EvalOptions eval_options(const MeasureSettings& s) {
  EvalOptions o;
  o.compile_only = s.compile_only;
  o.baselines = true;
  o.hot = s.hot;
  o.counters = s.counters;
  o.counter_set = "fast";
  return o;
}

class FileMeasurer final : public ShapeMeasurer {
public:
  FileMeasurer(Evaluator& ev, KernelSource source, BuildOptions build, const MeasureSettings& s)
      : ev_(ev), source_(std::move(source)), build_(std::move(build)), options_(eval_options(s)) {}

  ~FileMeasurer() override {
    if (ahead_.valid()) ahead_.wait();
  }

  ShapeRecord measure(const Task& task, const std::string& bucket) override {
    const auto t0 = std::chrono::steady_clock::now();
    ShapeRecord r = start_record(task, bucket, ev_.device());
    const auto file = kernel_file_for(source_, task);
    if (!file) {
      const auto names = kernel_file_names(task);
      r.note = fmt::format("no kernel file for this shape ({}, {} or {})", names[0], names[1], names[2]);
      finish_record(r, t0);
      return r;
    }
    KernelOutcome k{file->filename().string(), file->string(), {}, nullptr};
    try {
      const Candidate c = candidate(*file);
      k.name = c.name;
      k.result = ev_.evaluate(c, task, options_);
    } catch (const Error& e) {  // the file cannot be a candidate: its failure, not the sweep's
      k.result = make_failure(Status::compile_error, e.what(), task);
    }
    r.kernel = std::move(k);
    finish_record(r, t0);
    return r;
  }

  void prepare_next(const Task& task) override {
    if (ahead_.valid()) ahead_.wait();
    const auto file = kernel_file_for(source_, task);
    if (!file) return;
    Candidate c;
    try {
      c = candidate(*file);
    } catch (const Error&) {
      return;  // measure() records it
    }
    ahead_ = std::async(std::launch::async, [this, c] { ev_.compile_ahead(c); });
  }

  std::string describe() const override { return fmt::format("{} kernels, {}", source_.spec(), ev_.describe()); }

private:
  // Loaded once per file: a file: source is the same kernel for every shape.
  const Candidate& candidate(const std::filesystem::path& file) {
    std::lock_guard g(mu_);
    auto it = loaded_.find(file.string());
    if (it == loaded_.end()) it = loaded_.emplace(file.string(), load_candidate_with(file, "auto", build_)).first;
    return it->second;
  }

  Evaluator& ev_;
  KernelSource source_;
  BuildOptions build_;
  EvalOptions options_;
  std::mutex mu_;
  std::map<std::string, Candidate> loaded_;
  std::future<void> ahead_;
};

nlohmann::json tune_summary(const search::TileTuneOutcome& o) {
  nlohmann::json top = nlohmann::json::array();
  for (int i = 0; i < int(o.evaluated.size()) && i < kSweepTopRecorded; ++i) {
    const auto& e = o.evaluated[std::size_t(i)];
    top.push_back({{"name", e.name}, {"status", to_string(e.result.status)}, {"cold_us", e.result.cold.median_us}});
  }
  nlohmann::json j = sweep_of_tune(o);
  j["sweep_fastest"] = top;
  return j;
}

class TileMeasurer final : public ShapeMeasurer {
public:
  TileMeasurer(Evaluator& ev, int budget, const MeasureSettings& s) : ev_(ev) {
    options_.budget = budget;
    options_.confirm_top = 1;  // the winner only: the sweep's figure is its confirmation
    options_.counters = false;
    options_.compile_only = s.compile_only;
  }

  ShapeRecord measure(const Task& task, const std::string& bucket) override {
    const auto t0 = std::chrono::steady_clock::now();
    ev_.start();  // the worker reports the device: its limits shape the space
    ShapeRecord r = start_record(task, bucket, ev_.device());
    const tile::Limits limits = tile::with_device(tile::Limits{}, ev_.device());
    try {
      const auto outcome = search::tune_tile(ev_, task, limits, options_);
      if (outcome.confirmed()) {
        r.kernel = KernelOutcome{outcome.best().name, "", outcome.best().result, tune_summary(outcome)};
      } else if (!outcome.evaluated.empty()) {  // compile-only, or nothing verified
        const auto& first = outcome.evaluated.front();
        r.kernel = KernelOutcome{first.name, "", first.result, tune_summary(outcome)};
        if (first.result.status != Status::compiled) r.note = "no config of the sweep verified";
      }
    } catch (const Error& e) {
      if (e.kind() != Error::Kind::bad_input) throw;
      r.note = e.what();  // no legal tile config for this shape on this device
    }
    finish_record(r, t0);
    return r;
  }

  std::string describe() const override {
    return fmt::format("tile-tuned, {} configs per shape, {}", options_.budget, ev_.describe());
  }

private:
  Evaluator& ev_;
  search::TileTuneOptions options_;
};

}  // namespace

nlohmann::json MeasureSettings::to_json() const {
  nlohmann::json j = {{"hot", hot}, {"counters", counters}, {"max_timing_ms", max_timing_ms}, {"max_algos", max_algos},
                      {"compile_only", compile_only}};
  // Only when set: a run folder recorded before the option continues as it ran.
  if (reuse_baselines) j["reuse_baselines"] = true;
  return j;
}

std::unique_ptr<ShapeMeasurer> make_file_measurer(Evaluator& evaluator, const KernelSource& source,
                                                  const BuildOptions& build, const MeasureSettings& settings) {
  return std::make_unique<FileMeasurer>(evaluator, source, build, settings);
}

std::unique_ptr<ShapeMeasurer> make_tile_measurer(Evaluator& evaluator, int budget, const MeasureSettings& settings) {
  return std::make_unique<TileMeasurer>(evaluator, budget, settings);
}

}  // namespace tessera::bench
