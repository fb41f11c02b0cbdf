#pragma once
// The service's view of HTTP: a request and a response as plain values, so
// the routing and its tests do not depend on the transport (Beast lives in
// serve/detail/connection.*).
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace tessera::serve {

struct HttpRequest {
  std::string method;  // GET, POST, DELETE ...
  std::string target;  // path and query, e.g. /v1/sessions/ab12/step
  std::map<std::string, std::string> headers;  // names in lower case
  std::string body;

  // The header's value, or "" when absent.
  std::string header(const std::string& lower_name) const;
  std::string path() const;  // target without the query
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // besides Content-Type / Content-Length
  bool close = false;  // close the connection after this response
};

// Delivers the one response to a request. May be called from any thread;
// the transport takes it from there.
using Reply = std::function<void(HttpResponse)>;

}  // namespace tessera::serve
