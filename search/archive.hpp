#pragma once
// MAP-Elites archive: one elite per behaviour cell (search/descriptor.hpp).
// An elite is replaced only by a kernel that is faster beyond the noise.
#include <map>
#include <string>
#include <vector>

#include "search/acceptance.hpp"
#include "search/individual.hpp"
#include "search/rng.hpp"

namespace tessera::search {

struct ArchiveInsert {
  bool inserted = false;
  bool new_cell = false;
  long long replaced = -1;
  Verdict verdict = Verdict::better;
  bool naive_would_insert = false;
};

class Archive {
public:
  ArchiveInsert insert(const IndividualPtr& ind, const AcceptanceRule& rule);
  IndividualPtr elite(const std::string& key) const;
  IndividualPtr random_elite(Rng& rng) const;  // null when empty
  const std::map<std::string, IndividualPtr>& cells() const { return cells_; }
  std::size_t size() const { return cells_.size(); }

private:
  std::map<std::string, IndividualPtr> cells_;  // ordered: deterministic iteration
};

}  // namespace tessera::search
