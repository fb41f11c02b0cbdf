#pragma once
// Content hashing for the compile cache and novelty checks. Not cryptographic:
// keys only need to be stable and collision-free in practice.
#include <string>
#include <string_view>

namespace tessera {

// 128-bit hash rendered as 32 hex characters.
std::string content_hash(std::string_view data);

// Incremental form: feed parts with separators so that ("ab","c") != ("a","bc").
class Hasher {
public:
  Hasher& add(std::string_view part);
  std::string hex() const;

private:
  unsigned long long h1_ = 0xcbf29ce484222325ULL;
  unsigned long long h2_ = 0x84222325cbf29ce4ULL;
};

}  // namespace tessera
