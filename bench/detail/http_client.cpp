#include "bench/detail/http_client.hpp"

#include <cctype>
#include <cstdlib>
#include <mutex>
#include <string_view>

namespace tessera::bench::detail {

namespace {

// Setup calls failing is a tessera bug.
#define TESSERA_BENCH_CURL_CHECK(call)                                                                      \
  do {                                                                                                      \
    const CURLcode rc_ = (call);                                                                            \
    if (rc_ != CURLE_OK) throw ::tessera::Error(::tessera::where(__FILE__, __LINE__, #call, curl_easy_strerror(rc_))); \
  } while (0)

void global_init_once() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) throw Error("curl_global_init failed");
  });
}

size_t on_body(char* data, size_t size, size_t count, void* user) {
  static_cast<std::string*>(user)->append(data, size * count);
  return size * count;
}

size_t on_header(char* data, size_t size, size_t count, void* user) {
  const std::string_view line(data, size * count);
  constexpr std::string_view kRetryAfter = "retry-after:";
  if (line.size() > kRetryAfter.size()) {
    std::string head(line.substr(0, kRetryAfter.size()));
    for (char& c : head) c = char(std::tolower(static_cast<unsigned char>(c)));
    if (head == kRetryAfter)
      static_cast<HttpReply*>(user)->retry_after_s = std::atof(std::string(line.substr(kRetryAfter.size())).c_str());
  }
  return size * count;
}

}  // namespace

HttpClient::HttpClient(std::string base, double timeout_s) : base_(std::move(base)), timeout_s_(timeout_s) {
  global_init_once();
  curl_ = curl_easy_init();
  if (!curl_) throw Error("curl_easy_init failed");
  headers_ = curl_slist_append(nullptr, "Content-Type: application/json");
  if (!headers_) {
    curl_easy_cleanup(curl_);
    throw Error("curl_slist_append failed");
  }
}

HttpClient::~HttpClient() {
  curl_slist_free_all(headers_);
  curl_easy_cleanup(curl_);
}

HttpReply HttpClient::get(const std::string& path) { return perform(path, nullptr); }

HttpReply HttpClient::post_json(const std::string& path, const std::string& body) { return perform(path, &body); }

HttpReply HttpClient::perform(const std::string& path, const std::string* body) {
  HttpReply reply;
  const std::string url = base_ + path;
  char error[CURL_ERROR_SIZE] = {};
  curl_easy_reset(curl_);  // keeps the connection cache: the next request reuses the socket
  TESSERA_BENCH_CURL_CHECK(curl_easy_setopt(curl_, CURLOPT_URL, url.c_str()));
  TESSERA_BENCH_CURL_CHECK(curl_easy_setopt(curl_, CURLOPT_NOSIGNAL, 1L));
  TESSERA_BENCH_CURL_CHECK(curl_easy_setopt(curl_, CURLOPT_TIMEOUT_MS, long(timeout_s_ * 1000)));
  TESSERA_BENCH_CURL_CHECK(curl_easy_setopt(curl_, CURLOPT_ERRORBUFFER, error));
  TESSERA_BENCH_CURL_CHECK(curl_easy_setopt(curl_, CURLOPT_WRITEFUNCTION, on_body));
  TESSERA_BENCH_CURL_CHECK(curl_easy_setopt(curl_, CURLOPT_WRITEDATA, &reply.body));
  TESSERA_BENCH_CURL_CHECK(curl_easy_setopt(curl_, CURLOPT_HEADERFUNCTION, on_header));
  TESSERA_BENCH_CURL_CHECK(curl_easy_setopt(curl_, CURLOPT_HEADERDATA, &reply));
  if (body) {
    TESSERA_BENCH_CURL_CHECK(curl_easy_setopt(curl_, CURLOPT_HTTPHEADER, headers_));
    TESSERA_BENCH_CURL_CHECK(curl_easy_setopt(curl_, CURLOPT_POSTFIELDS, body->data()));
    TESSERA_BENCH_CURL_CHECK(curl_easy_setopt(curl_, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(body->size())));
  }
  const CURLcode rc = curl_easy_perform(curl_);
  if (rc != CURLE_OK) {
    reply.error = error[0] ? error : curl_easy_strerror(rc);
    return reply;
  }
  curl_easy_getinfo(curl_, CURLINFO_RESPONSE_CODE, &reply.status);
  return reply;
}

}  // namespace tessera::bench::detail
