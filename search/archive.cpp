#include "search/archive.hpp"

#include <iterator>

namespace tessera::search {

ArchiveInsert Archive::insert(const IndividualPtr& ind, const AcceptanceRule& rule) {
  ArchiveInsert out;
  const std::string key = ind->descriptor.key();
  auto it = cells_.find(key);
  if (it == cells_.end()) {
    cells_.emplace(key, ind);
    out.inserted = out.new_cell = out.naive_would_insert = true;
    return out;
  }
  const auto& elite = it->second;
  out.naive_would_insert = has_timing(ind->result) && (!has_timing(elite->result) ||
                                                       ind->result.cold.median_us < elite->result.cold.median_us);
  out.verdict = compare(ind->result, elite->result, rule);
  if (out.verdict != Verdict::better) return out;
  out.replaced = elite->id;
  it->second = ind;
  out.inserted = true;
  return out;
}

IndividualPtr Archive::elite(const std::string& key) const {
  auto it = cells_.find(key);
  return it == cells_.end() ? nullptr : it->second;
}

IndividualPtr Archive::random_elite(Rng& rng) const {
  if (cells_.empty()) return nullptr;
  auto it = cells_.begin();
  std::advance(it, long(rng.below(cells_.size())));
  return it->second;
}

}  // namespace tessera::search
