#include "search/tile_tuner.hpp"

#include <algorithm>
#include <cmath>
#include <random>
#include <set>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "tile/cost_model.hpp"
#include "tile/emit.hpp"
#include "core/thread_pool.hpp"

namespace tessera::search {

namespace {

constexpr int kRefineParents = 3;  // neighbours of this many of the fastest configs per refine round
constexpr int kMaxCompileThreads = 8;

// Compile threads beside the one that evaluates: the rest of the machine, at most kMaxCompileThreads.
int compile_threads() {
  const int hw = static_cast<int>(std::thread::hardware_concurrency());
  return std::clamp(hw - 1, 1, kMaxCompileThreads);
}

// A config the tune will measure, and how it came to it (TunedConfig::move).
struct Planned {
  tile::Config config;
  const char* move;
};

std::vector<Planned> planned(const std::vector<tile::Config>& configs, const char* move) {
  std::vector<Planned> out;
  for (const auto& c : configs) out.push_back({c, move});
  return out;
}

bool faster(const TunedConfig& x, const TunedConfig& y) {
  const bool ox = x.result.status == Status::ok, oy = y.result.status == Status::ok;
  if (ox != oy) return ox;
  return ox && x.result.cold.median_us < y.result.cold.median_us;
}

class Tuner {
public:
  Tuner(Evaluator& ev, const Task& task, tile::Limits limits, const TileTuneOptions& o, const TuneProgress& progress)
      : ev_(ev), task_(task), limits_(std::move(limits)), o_(o), progress_(progress), rng_(o.seed) {
    opt_.compile_only = o.compile_only;
    opt_.counters = o.counters;
    opt_.baselines = o.sweep_baselines;
    opt_.hot = false;  // the sweep ranks by cold time only; the confirmations measure the rest
  }

  TileTuneOutcome run() {
    TileTuneOutcome out;
    out.task = task_;
    const auto space = tune_space(task_, limits_, o_.backend);
    // Everything drawn from `space` (enumerated, sampled, neighbours) is of its
    // backend already; only the seeds need the --backend filter.
    auto all = tile::enumerate(space, task_, limits_, std::size_t(o_.budget) + 1);
    if (all.empty()) fail_bad_input(fmt::format("no legal tile config for {} on {}", task_.id(), limits_.arch));
    if (all.size() <= std::size_t(o_.budget)) {
      out.plan = "exhaustive";
      measure(planned(all, "exhaustive"));
    } else {
      out.plan = "model + explore + refine";
      if (o_.learned) learned_ = tile::model_for_device(tile::device_kind(ev_.device().name));
      for (auto& r : tile::rank_configs(task_, limits_, std::size_t(-1), learned_))
        if (in_backend(r.config, o_.backend)) model_.push_back(std::move(r));
      // The model's first picks always run; refine gets its share of the rest.
      const int refine = std::clamp(int(std::lround(o_.budget * o_.refine)), 0, o_.budget - 1);
      const int explore = std::max(o_.budget - refine, std::min(o_.budget, kModelFirst));
      measure(explore_plan(space, explore));
      while (int(done_.size()) < o_.budget) {
        auto next = refine_plan(space, o_.budget - int(done_.size()));
        if (next.empty()) break;
        measure(next);
      }
    }
    std::stable_sort(done_.begin(), done_.end(), faster);
    if (!model_.empty()) out.model = model_check();
    out.failures = int(std::count_if(done_.begin(), done_.end(), [](const TunedConfig& e) {
      return e.result.status != Status::ok && e.result.status != Status::compiled;
    }));
    EvalOptions confirm = opt_;
    confirm.counters = true;
    confirm.baselines = true;
    confirm.hot = true;
    for (const auto& e : done_) {  // ok configs come first, fastest first
      if (int(out.confirmations.size()) >= std::max(1, o_.confirm_top) || e.result.status != Status::ok) break;
      TunedConfig c = e;
      c.result = ev_.evaluate(tile_candidate(c.config, task_), task_, confirm);
      out.confirmations.push_back(std::move(c));
    }
    out.evaluated = std::move(done_);
    return out;
  }

private:
  // The model's top kModelFirst, then its next picks and seeded-random
  // samples in turn (samples find what the model undervalues), then the
  // seeds (the model has ranked them among its own).
  std::vector<Planned> explore_plan(const tile::Space& space, int n) {
    std::vector<Planned> out;
    auto next_model = [&] {
      for (; next_model_ < model_.size(); ++next_model_)
        if (seen_.insert(tile::name(model_[next_model_].config)).second) {
          out.push_back({model_[next_model_++].config, "model"});
          ++from_model_;
          return true;
        }
      return false;
    };
    while (int(out.size()) < std::min(n, kModelFirst) && next_model()) {
    }
    int misses = 0;
    for (bool model_turn = true; int(out.size()) < n && misses < 50 * n; model_turn = !model_turn) {
      if (model_turn && next_model()) continue;
      const auto c = tile::sample(space, task_, limits_, rng_);
      if (c && seen_.insert(tile::name(*c)).second) out.push_back({*c, "sample"});
      else ++misses;
    }
    for (const auto& c : tile::seeds(task_, limits_))
      if (int(out.size()) < n && in_backend(c, o_.backend) && seen_.insert(tile::name(c)).second)
        out.push_back({c, "seed"});
    return out;
  }

  ModelCheck model_check() const {
    ModelCheck m;
    m.ranked = true;
    m.from_model = from_model_;
    const auto& first = model_.front();
    m.first_pick = tile::name(first.config);
    m.first_pick_predicted_us = first.prediction.time_us;
    for (const auto& e : done_)
      if (e.name == m.first_pick && e.result.status == Status::ok) m.first_pick_measured_us = e.result.cold.median_us;
    if (!done_.empty() && done_.front().result.status == Status::ok) {
      const auto& w = done_.front();
      // By the model that ranked the sweep, as the first pick's prediction is.
      m.winner_rank = tile::model_rank(model_, w.config, task_, limits_, learned_);
      m.winner_predicted_us = tile::predict_ranked({w.config}, task_, limits_, learned_).front().time_us;
      m.winner_measured_us = w.result.cold.median_us;
    }
    return m;
  }

  // Unseen one-knob neighbours of the fastest configs so far, shuffled; at
  // most half the remaining budget per round, so later rounds start from
  // better parents.
  std::vector<Planned> refine_plan(const tile::Space& space, int remaining) {
    std::vector<const TunedConfig*> ranked;
    for (const auto& e : done_)
      if (e.result.status == Status::ok) ranked.push_back(&e);
    if (ranked.empty()) return explore_plan(space, remaining);  // nothing ran (or compile-only): keep sampling
    std::stable_sort(ranked.begin(), ranked.end(), [](auto* x, auto* y) { return faster(*x, *y); });
    std::vector<tile::Config> pool;
    for (int i = 0; i < int(ranked.size()) && i < kRefineParents; ++i)
      for (const auto& c : tile::neighbours(ranked[i]->config, space, task_, limits_))
        if (!seen_.count(tile::name(c))) pool.push_back(c);
    std::shuffle(pool.begin(), pool.end(), rng_);
    const int take = std::max(1, std::min(remaining, std::max(4, remaining / 2)));
    std::vector<Planned> out;
    for (const auto& c : pool)
      if (int(out.size()) < take && seen_.insert(tile::name(c)).second) out.push_back({c, "refine"});
    return out;
  }

  void measure(const std::vector<Planned>& batch) {
    std::vector<Candidate> cands;
    for (const auto& p : batch) cands.push_back(tile_candidate(p.config, task_));
    if (cands.empty()) return;
    // The GPU measures while the CPUs compile. The first candidate is compiled
    // at once (which also starts the worker, whose device fixes the compile
    // arch); the others are compiled ahead, in order, on a pool, and each
    // evaluate() finds its candidate in the compile cache, or compiles it
    // itself if it has caught up with the pool (a duplicate compile of one
    // key is harmless: cache entries are written atomically). The pool is
    // declared after `cands` and drops the jobs not yet started when it goes.
    ev_.precompile({cands.front()});
    tessera::ThreadPool ahead(compile_threads());
    for (std::size_t i = 1; i < cands.size(); ++i) ahead.submit([this, &cands, i] { ev_.compile_ahead(cands[i]); });
    for (std::size_t i = 0; i < batch.size(); ++i) {
      TunedConfig e{tile::name(batch[i].config), batch[i].config, ev_.evaluate(cands[i], task_, opt_),
                    int(done_.size()), batch[i].move};
      if (e.result.status == Status::ok) {
        best_speedup_ = std::max(best_speedup_, e.result.speedup);
        const double us = e.result.cold.median_us;
        if (us > 0 && (best_us_ == 0 || us < best_us_)) best_us_ = us;
      }
      done_.push_back(std::move(e));
      if (progress_)
        progress_(int(done_.size()), std::max<int>(o_.budget, int(done_.size())), best_speedup_, best_us_);
    }
  }

  Evaluator& ev_;
  Task task_;
  tile::Limits limits_;
  const TileTuneOptions& o_;
  const TuneProgress& progress_;
  std::mt19937_64 rng_;
  EvalOptions opt_;
  std::set<std::string> seen_;
  std::vector<TunedConfig> done_;
  tile::LearnedModel learned_;       // the model that ranked model_ (empty: the analytical one)
  std::vector<tile::Ranked> model_;  // the cost model's order (of the backend asked for)
  std::size_t next_model_ = 0;
  int from_model_ = 0;
  double best_speedup_ = 0;
  double best_us_ = 0;
};

}  // namespace

void check_backend(const std::string& backend) {
  if (!backend.empty() && backend != "mma_sync" && backend != "wgmma_tma")
    fail_bad_input(fmt::format("--backend '{}' (expected mma_sync or wgmma_tma)", backend));
}

bool in_backend(const tile::Config& config, const std::string& backend) {
  return backend.empty() || tile::to_string(config.backend) == backend;
}

tile::Space tune_space(const Task& task, const tile::Limits& limits, const std::string& backend) {
  check_backend(backend);
  tile::Space s = tile::default_space(task, limits);
  if (backend.empty()) return s;
  std::erase_if(s.parts, [&](const tile::SubSpace& p) { return tile::to_string(p.backend) != backend; });
  return s;
}

Candidate tile_candidate(const tile::Config& config, const Task& task) {
  Candidate cand;
  cand.kind = CandidateKind::device_only;
  cand.source = tile::emit(config, task);
  cand.name = tile::name(config);
  cand.meta["tile_config"] = tile::to_json(config);
  return cand;
}

std::vector<tile::Measurement> tune_rows(const TileTuneOutcome& outcome, const tile::Limits& limits,
                                         const std::string& device_kind) {
  std::vector<tile::Measurement> rows;
  for (const auto& e : outcome.evaluated)
    if (has_cold_time(e.result))
      rows.push_back({outcome.task, e.config, limits, device_kind, e.result.cold.median_us});
  return rows;
}

TileTuneOutcome tune_tile(Evaluator& evaluator, const Task& task, const tile::Limits& limits,
                          const TileTuneOptions& options, const TuneProgress& progress) {
  return Tuner(evaluator, task, limits, options, progress).run();
}

nlohmann::json to_json(const ModelCheck& m) {
  if (!m.ranked) return nullptr;
  return {{"first_pick", m.first_pick},
          {"first_pick_predicted_us", m.first_pick_predicted_us},
          {"first_pick_measured_us", m.first_pick_measured_us},
          {"winner_rank", m.winner_rank},
          {"winner_predicted_us", m.winner_predicted_us},
          {"winner_measured_us", m.winner_measured_us},
          {"from_model", m.from_model}};
}

}  // namespace tessera::search
