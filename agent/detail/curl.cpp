#include "agent/detail/curl.hpp"

#include <algorithm>
#include <cctype>
#include <mutex>
#include <string_view>

namespace tessera::agent::detail {

namespace {
void global_init_once() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) throw Error("curl_global_init failed");
  });
}

struct TransferState {
  HttpResponse* response;
  std::size_t limit;
  const CancelToken* cancel;
};

size_t on_body(char* data, size_t size, size_t count, void* user) {
  auto* s = static_cast<TransferState*>(user);
  const size_t n = size * count;
  if (s->response->body.size() + n > s->limit) {
    s->response->too_large = true;
    return 0;  // aborts the transfer with CURLE_WRITE_ERROR
  }
  s->response->body.append(data, n);
  return n;
}

std::string trim_lower(std::string_view v) {
  while (!v.empty() && std::isspace(static_cast<unsigned char>(v.front()))) v.remove_prefix(1);
  while (!v.empty() && std::isspace(static_cast<unsigned char>(v.back()))) v.remove_suffix(1);
  std::string out(v);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  return out;
}

size_t on_header(char* data, size_t size, size_t count, void* user) {
  auto* s = static_cast<TransferState*>(user);
  const size_t n = size * count;
  std::string_view line(data, n);
  // A new status line starts a new header block (redirects, 100-continue).
  if (line.rfind("HTTP/", 0) == 0) {
    s->response->content_type.clear();
    s->response->retry_after.reset();
    return n;
  }
  const auto colon = line.find(':');
  if (colon == std::string_view::npos) return n;
  const std::string name = trim_lower(line.substr(0, colon));
  std::string_view value = line.substr(colon + 1);
  while (!value.empty() && (value.back() == '\r' || value.back() == '\n')) value.remove_suffix(1);
  if (name == "content-type") {
    std::string media = trim_lower(value);
    s->response->content_type = media.substr(0, media.find(';'));
    while (!s->response->content_type.empty() && s->response->content_type.back() == ' ')
      s->response->content_type.pop_back();
  } else if (name == "retry-after") {
    s->response->retry_after = std::string(value);
  }
  return n;
}

int on_progress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  auto* s = static_cast<TransferState*>(user);
  if (is_cancelled(s->cancel)) {
    s->response->cancelled = true;
    return 1;  // CURLE_ABORTED_BY_CALLBACK
  }
  return 0;
}

long to_ms(double seconds) { return std::max(1L, static_cast<long>(seconds * 1000.0)); }
}  // namespace

CurlEasy::CurlEasy() {
  global_init_once();
  handle_ = curl_easy_init();
  if (handle_ == nullptr) throw Error("curl_easy_init failed");
}
CurlEasy::~CurlEasy() { curl_easy_cleanup(handle_); }

CurlHeaders::~CurlHeaders() { curl_slist_free_all(list_); }
void CurlHeaders::append(const std::string& line) {
  curl_slist* next = curl_slist_append(list_, line.c_str());
  if (next == nullptr) throw Error("curl_slist_append failed (out of memory)");
  list_ = next;
}

HttpResponse http_post(const HttpRequest& request, const CancelToken* cancel) {
  HttpResponse response;
  TransferState state{&response, request.max_response_bytes, cancel};
  CurlEasy easy;
  CurlHeaders headers;
  for (const auto& h : request.headers) headers.append(h);
  headers.append("Expect:");  // no 100-continue round trip for large prompts
  char errbuf[CURL_ERROR_SIZE] = {0};
  CURL* h = easy.get();
  TESSERA_CURL_CHECK(curl_easy_setopt(h, CURLOPT_URL, request.url.c_str()));
  TESSERA_CURL_CHECK(curl_easy_setopt(h, CURLOPT_POST, 1L));
  TESSERA_CURL_CHECK(curl_easy_setopt(h, CURLOPT_POSTFIELDS, request.body.data()));
  TESSERA_CURL_CHECK(curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(request.body.size())));
  TESSERA_CURL_CHECK(curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers.get()));
  TESSERA_CURL_CHECK(curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L));  // threads: no SIGALRM for DNS timeouts
  TESSERA_CURL_CHECK(curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, to_ms(request.connect_timeout_s)));
  TESSERA_CURL_CHECK(curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, to_ms(request.total_timeout_s)));
  TESSERA_CURL_CHECK(curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf));
  TESSERA_CURL_CHECK(curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body));
  TESSERA_CURL_CHECK(curl_easy_setopt(h, CURLOPT_WRITEDATA, &state));
  TESSERA_CURL_CHECK(curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header));
  TESSERA_CURL_CHECK(curl_easy_setopt(h, CURLOPT_HEADERDATA, &state));
  TESSERA_CURL_CHECK(curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L));
  TESSERA_CURL_CHECK(curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, on_progress));
  TESSERA_CURL_CHECK(curl_easy_setopt(h, CURLOPT_XFERINFODATA, &state));
  TESSERA_CURL_CHECK(curl_easy_setopt(h, CURLOPT_ACCEPT_ENCODING, ""));  // any encoding curl supports
  TESSERA_CURL_CHECK(curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L));   // a POST must not silently move

  response.code = curl_easy_perform(h);
  curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &response.status);
  if (response.code != CURLE_OK)
    response.curl_error = errbuf[0] != '\0' ? std::string(errbuf) : std::string(curl_easy_strerror(response.code));
  while (!response.curl_error.empty() && response.curl_error.back() == '\n') response.curl_error.pop_back();
  return response;
}

}  // namespace tessera::agent::detail
