#pragma once
// The population of one task: islands of bounded size that evolve apart and
// exchange their best kernels periodically (ring migration). Insertion is
// noise-aware: a full island replaces its worst member only with a kernel
// that is faster beyond the measurements' spread, so an island's best member
// is never lost (elitism).
#include <optional>
#include <vector>

#include "search/acceptance.hpp"
#include "search/individual.hpp"
#include "search/rng.hpp"

namespace tessera::search {

inline constexpr int kDefaultIslands = 3;
inline constexpr int kDefaultIslandCapacity = 16;
inline constexpr int kDefaultMigrationInterval = 12;  // applied steps of the task between migrations
inline constexpr int kDefaultTournamentSize = 3;
inline constexpr double kDefaultExplorationRatio = 0.2;  // uniform pick from the island
inline constexpr double kDefaultEliteRatio = 0.2;        // pick from the MAP-Elites archive

enum class SelectionRule { tournament, fitness_weighted };
SelectionRule parse_selection_rule(const std::string& s);  // throws bad_input
std::string to_string(SelectionRule r);

struct InsertOutcome {
  bool inserted = false;
  long long replaced = -1;      // id of the member it replaced
  Verdict verdict = Verdict::better;
  bool naive_would_insert = false;  // plain median comparison's answer
};

class Population {
public:
  Population(int islands, int capacity);

  int islands() const { return int(islands_.size()); }
  const std::vector<IndividualPtr>& island(int i) const { return islands_.at(i); }
  bool empty() const;
  std::size_t size() const;

  // Adds `ind` to island ind->island (see the header comment for the rule).
  InsertOutcome insert(const IndividualPtr& ind, const AcceptanceRule& rule);

  // Copies each island's best to the next island in the ring. Returns the ids moved.
  std::vector<long long> migrate(const AcceptanceRule& rule);

  IndividualPtr best_of(int island) const;
  IndividualPtr worst_of(int island) const;

  // Parent for a step on `island`: uniform with probability exploration,
  // otherwise by `rule`. Null when the island is empty.
  IndividualPtr select(int island, SelectionRule rule, int tournament_size, double exploration, Rng& rng) const;

  // Other good kernels to show the proposer: the island's best members that
  // are not the parent, then the best of other islands, up to `count`.
  std::vector<IndividualPtr> inspirations(int island, long long parent_id, int count) const;

  // Members by descending fitness (ties: lower id first), across islands, unique ids.
  std::vector<IndividualPtr> ranked() const;

private:
  std::vector<std::vector<IndividualPtr>> islands_;
  int capacity_;
};

}  // namespace tessera::search
