#pragma once
// A small HTTP/1.1 server on 127.0.0.1 (ephemeral port) for the client tests.
// One thread per connection; every wait is bounded and observes the stop
// flag, so the destructor returns promptly even mid-response.
#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace tessera::testing {

struct TestRequest {
  std::string method, path;
  std::map<std::string, std::string> headers;  // lower-case names
  std::string body;
  std::chrono::steady_clock::time_point received;
};

struct TestResponse {
  int status = 200;
  std::vector<std::pair<std::string, std::string>> headers = {{"Content-Type", "application/json"}};
  std::string body;
  // Non-empty: sent one by one without Content-Length, then the connection closes.
  std::vector<std::string> chunks;
  std::chrono::milliseconds chunk_delay{0};
  std::chrono::milliseconds delay{0};  // before anything is sent
  long declared_length = -1;           // > body size: the body is cut short

  TestResponse after(std::chrono::milliseconds d) && { delay = d; return std::move(*this); }
  TestResponse declare_length(long n) && { declared_length = n; return std::move(*this); }
};

using Headers = std::vector<std::pair<std::string, std::string>>;
inline TestResponse respond(int status, std::string body, Headers headers = {{"Content-Type", "application/json"}}) {
  TestResponse r;
  r.status = status;
  r.body = std::move(body);
  r.headers = std::move(headers);
  return r;
}

// index: 0 for the first request this server received, 1 for the next...
using Handler = std::function<TestResponse(const TestRequest&, int index)>;

class TestServer {
public:
  explicit TestServer(Handler handler);
  ~TestServer();
  TestServer(const TestServer&) = delete;
  TestServer& operator=(const TestServer&) = delete;

  int port() const { return port_; }
  std::string base_url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/v1"; }
  std::vector<TestRequest> requests() const;
  int max_concurrent() const { return max_concurrent_.load(); }

private:
  void accept_loop();
  void serve(int fd);
  bool sleep_unless_stopped(std::chrono::milliseconds d) const;

  Handler handler_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<int> next_index_{0};
  std::atomic<int> in_flight_{0};
  std::atomic<int> max_concurrent_{0};
  mutable std::mutex mutex_;
  std::vector<TestRequest> requests_;
  std::vector<std::thread> workers_;
  std::thread acceptor_;
};

// A JSON Chat Completions reply.
std::string openai_reply(const std::string& content, long long prompt_tokens = 11, long long completion_tokens = 7,
                         const std::string& reasoning = "", const std::string& model = "test-model");

// --- An OpenAI-compatible model for search tests ---------------------------

// examples/hgemm_naive.cu made distinct by an unroll pragma: a device-only
// kernel that compiles, different for each `variant` even once normalised.
std::string naive_kernel(int variant);
// A reply proposing naive_kernel(variant) in a fenced block.
std::string kernel_reply(int variant);
// The request's messages joined (what the model was asked) and its fields.
struct ChatAsked {
  std::string model;
  std::string user;  // the last user message
  long long prompt_chars = 0;
  nlohmann::json body;
};
ChatAsked parse_chat(const TestRequest& request);
// A 200 reply with `content` that bills a prompt token per `chars_per_token`
// characters asked and a completion token per 4 characters of the reply.
TestResponse billed_reply(const TestRequest& request, const std::string& content, double chars_per_token = 3.2);
// A model that answers each request with a new kernel (kernel_reply of a
// count of the requests), billed as billed_reply does.
Handler distinct_kernels();
// An OpenAI-style error body, as servers and proxies send it.
TestResponse error_reply(int status, const std::string& message);

// Runs the tessera binary (TESSERA_BINARY) with `args` and the variables of
// `env` ("A=1 -u B" sets A and unsets B), stdout and stderr together into
// `output`. Returns the exit code, or -1 when it did not exit normally.
int run_tessera(const std::string& args, std::string* output, const std::string& env = "");

}  // namespace tessera::testing
