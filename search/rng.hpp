#pragma once
// Deterministic random numbers for search decisions. Every decision draws from
// a generator derived from (seed, step, stream), never from a shared stateful
// engine, so a resumed run replays the same draws without saving RNG state and
// the draws do not depend on thread timing. The distributions are written out
// here because std::*_distribution output differs between standard libraries.
#include <cstdint>
#include <string_view>

namespace tessera::search {

class Rng {
public:
  explicit Rng(std::uint64_t state) : state_(state) {}
  // A generator for one decision: `stream` names the decision ("parent", "arm").
  static Rng derive(std::uint64_t seed, std::uint64_t step, std::string_view stream);

  std::uint64_t next_u64();
  double uniform();                        // [0, 1)
  std::uint64_t below(std::uint64_t n);    // [0, n), n > 0
  bool bernoulli(double p) { return uniform() < p; }
  double normal();                         // standard normal (Box-Muller)
  double gamma(double shape);              // Marsaglia-Tsang, shape > 0
  double beta(double a, double b);

private:
  std::uint64_t state_;
};

}  // namespace tessera::search
