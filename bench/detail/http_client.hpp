#pragma once
// A small blocking HTTP client over libcurl for `tessera bench scale`'s
// serve path: one per client thread, its connection kept alive between
// requests, as a trainer's client would keep it.
#include <curl/curl.h>

#include <string>

#include "core/error.hpp"

namespace tessera::bench::detail {

struct HttpReply {
  long status = 0;        // 0: no answer (error says why)
  std::string body;
  std::string error;      // curl's text when the transfer failed
  double retry_after_s = 0;  // from a 429's Retry-After
};

class HttpClient {
public:
  // `base`: "http://127.0.0.1:PORT"; `timeout_s`: the longest one request may take.
  HttpClient(std::string base, double timeout_s);
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  HttpReply get(const std::string& path);
  HttpReply post_json(const std::string& path, const std::string& body);

private:
  HttpReply perform(const std::string& path, const std::string* body);

  std::string base_;
  double timeout_s_;
  CURL* curl_;
  curl_slist* headers_ = nullptr;
};

}  // namespace tessera::bench::detail
