#include "harness/core/counter_set.hpp"

#include "harness/core/error.hpp"

namespace tessera {

CounterSet parse_counter_set(const std::string& name) {
  if (name == "full") return CounterSet::full;
  if (name == "fast") return CounterSet::fast;
  throw Error(Error::Kind::bad_input, "unknown counter set '" + name + "' (full | fast)");
}

std::string to_string(CounterSet set) { return set == CounterSet::full ? "full" : "fast"; }

}  // namespace tessera
