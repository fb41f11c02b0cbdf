#include "serve/http.hpp"

namespace tessera::serve {

std::string HttpRequest::header(const std::string& lower_name) const {
  auto it = headers.find(lower_name);
  return it == headers.end() ? std::string() : it->second;
}

std::string HttpRequest::path() const { return target.substr(0, target.find('?')); }

}  // namespace tessera::serve
