#pragma once
// Bearer-token authentication. The comparison takes the same time whatever
// the presented token shares with the real one, so response times say
// nothing about its characters.
#include <string>
#include <string_view>

namespace tessera::serve::detail {

// Constant time in the contents (it depends on the lengths only).
bool same_secret(std::string_view presented, std::string_view expected);
// True when `authorization` is "Bearer <token>" with the right token, or no
// token is configured.
bool authorized(const std::string& authorization, const std::string& token);

}  // namespace tessera::serve::detail
