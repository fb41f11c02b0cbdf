#pragma once
// One evaluated kernel as the search keeps it.
#include <memory>
#include <string>
#include <vector>

#include "core/candidate.hpp"
#include "core/result.hpp"
#include "search/descriptor.hpp"

namespace tessera::search {

struct Individual {
  long long id = -1;      // the step that produced it
  std::string task_id;
  Candidate candidate;
  EvalResult result;      // after any re-measurement
  Descriptor descriptor;
  long long parent = -1;  // -1: from scratch
  int island = 0;

  // Fitness for selection: the speedup over the best baseline. Compile-only
  // results (no timing) have fitness 0 and never replace anything.
  double fitness() const { return is_success(result.status) ? result.speedup : 0.0; }
};

using IndividualPtr = std::shared_ptr<const Individual>;

}  // namespace tessera::search
