#pragma once
// libcurl behind RAII handles and one check macro. One blocking POST per call;
// the transfer observes a CancelToken and a response size limit.
#include <curl/curl.h>

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "agent/retry.hpp"
#include "core/error.hpp"

// Setup calls (curl_easy_setopt, curl_slist_append) failing is a tessera bug.
#define TESSERA_CURL_CHECK(call)                                                                    \
  do {                                                                                              \
    const CURLcode tessera_curl_rc_ = (call);                                                       \
    if (tessera_curl_rc_ != CURLE_OK)                                                               \
      throw ::tessera::Error(::tessera::where(__FILE__, __LINE__, #call, curl_easy_strerror(tessera_curl_rc_))); \
  } while (0)

namespace tessera::agent::detail {

class CurlEasy {
public:
  CurlEasy();
  ~CurlEasy();
  CurlEasy(const CurlEasy&) = delete;
  CurlEasy& operator=(const CurlEasy&) = delete;
  CURL* get() const noexcept { return handle_; }

private:
  CURL* handle_;
};

class CurlHeaders {
public:
  CurlHeaders() = default;
  ~CurlHeaders();
  CurlHeaders(const CurlHeaders&) = delete;
  CurlHeaders& operator=(const CurlHeaders&) = delete;
  void append(const std::string& line);
  curl_slist* get() const noexcept { return list_; }

private:
  curl_slist* list_ = nullptr;
};

struct HttpRequest {
  std::string url;
  std::vector<std::string> headers;  // "Name: value"
  std::string body;
  double connect_timeout_s = 10;
  double total_timeout_s = 60;
  std::size_t max_response_bytes = 1 << 20;
};

struct HttpResponse {
  CURLcode code = CURLE_OK;
  std::string curl_error;  // CURLOPT_ERRORBUFFER text, else curl_easy_strerror
  long status = 0;
  std::string content_type;  // media type only, lower case, no parameters
  std::optional<std::string> retry_after;
  std::string body;
  bool too_large = false;
  bool cancelled = false;
};

HttpResponse http_post(const HttpRequest& request, const CancelToken* cancel);

}  // namespace tessera::agent::detail
