#pragma once
// Base64 (RFC 4648, padded) for the binary trees a cost-model file carries as
// JSON strings. Boost's archive iterators do the work; this adds the padding
// they leave to the caller, and turns a bad character into bad input.
#include <string>
#include <string_view>

namespace tessera::tile::detail {

std::string base64_encode(std::string_view bytes);
// Throws tessera::Error (bad input) on a character outside the alphabet or a
// length no encoder writes.
std::string base64_decode(std::string_view text);

}  // namespace tessera::tile::detail
