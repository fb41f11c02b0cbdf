#include "search/population.hpp"

#include <algorithm>
#include <set>

#include "core/error.hpp"

namespace tessera::search {

SelectionRule parse_selection_rule(const std::string& s) {
  if (s == "tournament") return SelectionRule::tournament;
  if (s == "fitness_weighted" || s == "fitness-weighted") return SelectionRule::fitness_weighted;
  fail_bad_input("unknown selection rule '" + s + "' (tournament | fitness_weighted)");
}

std::string to_string(SelectionRule r) {
  return r == SelectionRule::tournament ? "tournament" : "fitness_weighted";
}

namespace {
// Strict total order for determinism: higher fitness first, then older.
bool fitter(const IndividualPtr& a, const IndividualPtr& b) {
  if (a->fitness() != b->fitness()) return a->fitness() > b->fitness();
  return a->id < b->id;
}
}  // namespace

Population::Population(int islands, int capacity) : islands_(std::max(1, islands)), capacity_(std::max(1, capacity)) {}

bool Population::empty() const {
  return std::all_of(islands_.begin(), islands_.end(), [](const auto& v) { return v.empty(); });
}

std::size_t Population::size() const {
  std::size_t n = 0;
  for (const auto& v : islands_) n += v.size();
  return n;
}

IndividualPtr Population::best_of(int island) const {
  const auto& v = islands_.at(island);
  if (v.empty()) return nullptr;
  return *std::min_element(v.begin(), v.end(), fitter);
}

IndividualPtr Population::worst_of(int island) const {
  const auto& v = islands_.at(island);
  if (v.empty()) return nullptr;
  return *std::max_element(v.begin(), v.end(), fitter);
}

InsertOutcome Population::insert(const IndividualPtr& ind, const AcceptanceRule& rule) {
  TESSERA_REQUIRE(ind && ind->island >= 0 && ind->island < islands(), "island out of range");
  auto& v = islands_[ind->island];
  InsertOutcome out;
  for (const auto& m : v)
    if (m->id == ind->id) return out;  // already here (migration)
  if (int(v.size()) < capacity_) {
    v.push_back(ind);
    out.inserted = out.naive_would_insert = true;
    return out;
  }
  const IndividualPtr worst = worst_of(ind->island);
  out.naive_would_insert = has_timing(ind->result) && (!has_timing(worst->result) ||
                                                       ind->result.cold.median_us < worst->result.cold.median_us);
  out.verdict = compare(ind->result, worst->result, rule);
  if (out.verdict != Verdict::better) return out;
  std::replace(v.begin(), v.end(), worst, ind);
  out.inserted = true;
  out.replaced = worst->id;
  return out;
}

std::vector<long long> Population::migrate(const AcceptanceRule& rule) {
  std::vector<long long> moved;
  if (islands() < 2) return moved;
  std::vector<IndividualPtr> bests;
  for (int i = 0; i < islands(); ++i) bests.push_back(best_of(i));
  for (int i = 0; i < islands(); ++i) {
    if (!bests[i]) continue;
    auto copy = std::make_shared<Individual>(*bests[i]);
    copy->island = (i + 1) % islands();
    if (insert(copy, rule).inserted) moved.push_back(copy->id);
  }
  return moved;
}

IndividualPtr Population::select(int island, SelectionRule rule, int tournament_size, double exploration,
                                 Rng& rng) const {
  const auto& v = islands_.at(island);
  if (v.empty()) return nullptr;
  // Island members are kept in insertion order, which is deterministic.
  if (rng.bernoulli(exploration)) return v[rng.below(v.size())];
  if (rule == SelectionRule::tournament) {
    IndividualPtr best;
    for (int i = 0; i < std::max(1, tournament_size); ++i) {
      const auto& c = v[rng.below(v.size())];
      if (!best || fitter(c, best)) best = c;
    }
    return best;
  }
  // Fitness-weighted (roulette); a small floor keeps zero-fitness kernels reachable.
  constexpr double kFitnessFloor = 1e-3;
  double total = 0;
  for (const auto& m : v) total += std::max(kFitnessFloor, m->fitness());
  double x = rng.uniform() * total;
  for (const auto& m : v) {
    x -= std::max(kFitnessFloor, m->fitness());
    if (x < 0) return m;
  }
  return v.back();
}

std::vector<IndividualPtr> Population::inspirations(int island, long long parent_id, int count) const {
  std::vector<IndividualPtr> out;
  std::set<long long> used{parent_id};
  auto take = [&](std::vector<IndividualPtr> pool, int limit) {
    std::sort(pool.begin(), pool.end(), fitter);
    for (const auto& m : pool) {
      if (int(out.size()) >= count || limit-- <= 0) return;
      if (used.insert(m->id).second) out.push_back(m);
    }
  };
  take(islands_.at(island), std::max(1, count - 1));
  for (int i = 1; i < islands(); ++i) take(islands_[(island + i) % islands()], 1);
  return out;
}

std::vector<IndividualPtr> Population::ranked() const {
  std::vector<IndividualPtr> all;
  std::set<long long> seen;
  for (const auto& v : islands_)
    for (const auto& m : v)
      if (seen.insert(m->id).second) all.push_back(m);
  std::sort(all.begin(), all.end(), fitter);
  return all;
}

}  // namespace tessera::search
