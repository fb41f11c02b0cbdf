#pragma once
// Novelty check: a candidate whose source is identical to an earlier one after
// removing comments and normalising whitespace is not evaluated again.
#include <string>
#include <string_view>
#include <unordered_map>

#include "core/candidate.hpp"

namespace tessera::search {

// Drops // and /* */ comments (not inside string or character literals),
// collapses whitespace runs to one space, and drops the space next to
// punctuation, so "a+b" and "a + b  // sum" normalise alike.
std::string normalise_source(std::string_view source);

// content_hash of the candidate kind and its normalised source.
std::string novelty_key(const Candidate& candidate);

// The keys seen so far, each with the step that introduced it.
class NoveltyIndex {
public:
  // The earlier step with the same key, or -1 (and records the key for `step`).
  long long check_and_insert(const std::string& key, long long step);
  long long find(const std::string& key) const;
  std::size_t size() const { return seen_.size(); }

private:
  std::unordered_map<std::string, long long> seen_;
};

}  // namespace tessera::search
