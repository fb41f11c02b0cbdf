#include "search/rng.hpp"

#include <cmath>
#include <numbers>

namespace tessera::search {

namespace {
std::uint64_t splitmix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}
}  // namespace

Rng Rng::derive(std::uint64_t seed, std::uint64_t step, std::string_view stream) {
  std::uint64_t h = 0xcbf29ce484222325ULL;  // FNV-1a over the stream name
  for (char c : stream) h = (h ^ static_cast<unsigned char>(c)) * 0x100000001b3ULL;
  return Rng(splitmix(splitmix(seed) ^ splitmix(step + 0x51ed27ULL) ^ h));
}

std::uint64_t Rng::next_u64() {
  state_ += 0x9e3779b97f4a7c15ULL;
  std::uint64_t z = state_;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

double Rng::uniform() { return double(next_u64() >> 11) * 0x1.0p-53; }

std::uint64_t Rng::below(std::uint64_t n) { return n == 0 ? 0 : next_u64() % n; }

double Rng::normal() {
  double u1 = uniform();
  while (u1 <= 0) u1 = uniform();
  const double u2 = uniform();
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

double Rng::gamma(double shape) {
  if (shape < 1.0) {  // boost: Gamma(a) = Gamma(a+1) * U^(1/a)
    double u = uniform();
    while (u <= 0) u = uniform();
    return gamma(shape + 1.0) * std::pow(u, 1.0 / shape);
  }
  const double d = shape - 1.0 / 3.0;
  const double c = 1.0 / std::sqrt(9.0 * d);
  for (;;) {
    double x = normal();
    double v = 1.0 + c * x;
    if (v <= 0) continue;
    v = v * v * v;
    const double u = uniform();
    if (u < 1.0 - 0.0331 * x * x * x * x) return d * v;
    if (u > 0 && std::log(u) < 0.5 * x * x + d * (1.0 - v + std::log(v))) return d * v;
  }
}

double Rng::beta(double a, double b) {
  const double x = gamma(a);
  const double y = gamma(b);
  return (x + y) > 0 ? x / (x + y) : 0.5;
}

}  // namespace tessera::search
