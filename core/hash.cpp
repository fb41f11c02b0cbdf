#include "core/hash.hpp"

#include <fmt/format.h>

namespace tessera {

namespace {
// Two FNV-1a lanes with different primes/offsets, finished with a splitmix64
// avalanche so that similar sources give unrelated keys.
constexpr unsigned long long kPrime1 = 0x100000001b3ULL;
constexpr unsigned long long kPrime2 = 0x1000193ULL * 0x1000000ULL + 0x3b;

unsigned long long mix(unsigned long long x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}
}  // namespace

Hasher& Hasher::add(std::string_view part) {
  auto feed = [this](unsigned char c) {
    h1_ = (h1_ ^ c) * kPrime1;
    h2_ = (h2_ ^ c) * kPrime2;
  };
  for (unsigned char c : part) feed(c);
  // Length-prefix-free separator: mixes the length in after the bytes.
  for (int i = 0; i < 8; ++i) feed(static_cast<unsigned char>((part.size() >> (8 * i)) & 0xff));
  return *this;
}

std::string Hasher::hex() const { return fmt::format("{:016x}{:016x}", mix(h1_), mix(h2_ ^ h1_)); }

std::string content_hash(std::string_view data) { return Hasher().add(data).hex(); }

}  // namespace tessera
