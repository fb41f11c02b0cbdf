#include "serve/detail/auth.hpp"

#include <cstddef>

namespace tessera::serve::detail {

bool same_secret(std::string_view presented, std::string_view expected) {
  // Every byte of the expected token is compared, whatever the presented
  // one's length, and nothing branches on the contents.
  unsigned char diff = presented.size() == expected.size() ? 0 : 1;
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const unsigned char p = i < presented.size() ? static_cast<unsigned char>(presented[i]) : 0;
    diff |= static_cast<unsigned char>(p ^ static_cast<unsigned char>(expected[i]));
  }
  return diff == 0;
}

bool authorized(const std::string& authorization, const std::string& token) {
  if (token.empty()) return true;
  constexpr std::string_view kScheme = "Bearer ";
  if (authorization.size() < kScheme.size()) return false;
  // The scheme name is case-insensitive (RFC 9110).
  for (std::size_t i = 0; i + 1 < kScheme.size(); ++i)
    if ((authorization[i] | 0x20) != (kScheme[i] | 0x20)) return false;
  if (authorization[kScheme.size() - 1] != ' ') return false;
  return same_secret(std::string_view(authorization).substr(kScheme.size()), token);
}

}  // namespace tessera::serve::detail
