#include "core/error.hpp"

#include <fmt/format.h>

namespace tessera {

std::string where(const char* file, int line, std::string_view call, std::string_view detail) {
  // Keep only the path below the repo root: absolute build paths are noise.
  std::string_view f(file);
  for (std::string_view root : {"/core/", "/confine/", "/tile/", "/worker/", "/harness/", "/agent/", "/search/", "/env/", "/serve/",
                                 "/bench/", "/python/", "/cli/"}) {
    if (auto pos = f.rfind(root); pos != std::string_view::npos) {
      f.remove_prefix(pos + 1);
      break;
    }
  }
  return fmt::format("{}:{}: {} failed: {}", f, line, call, detail);
}

}  // namespace tessera
