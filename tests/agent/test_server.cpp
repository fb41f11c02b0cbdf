#include "tests/agent/test_server.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <memory>
#include <cstdlib>
#include <cctype>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

namespace tessera::testing {

namespace {
constexpr std::chrono::milliseconds kPollSlice{20};
constexpr int kReadTimeoutMs = 5000;

bool send_all(int fd, const std::string& data) {
  size_t off = 0;
  while (off < data.size()) {
    ssize_t n = ::send(fd, data.data() + off, data.size() - off, MSG_NOSIGNAL);
    if (n <= 0) return false;  // the client went away (timeout test): fine
    off += size_t(n);
  }
  return true;
}

std::string reason_phrase(int status) {
  switch (status) {
    case 200: return "OK";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 429: return "Too Many Requests";
    case 500: return "Internal Server Error";
    case 503: return "Service Unavailable";
    default: return "Status";
  }
}
}  // namespace

TestServer::TestServer(Handler handler) : handler_(std::move(handler)) {
  // A CI proxy must not intercept requests to this loopback server.
  ::setenv("no_proxy", "127.0.0.1,localhost", 1);
  ::setenv("NO_PROXY", "127.0.0.1,localhost", 1);
  listen_fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
  if (listen_fd_ < 0) throw std::runtime_error("socket failed");
  int one = 1;
  ::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(listen_fd_, 16) != 0) {
    ::close(listen_fd_);
    throw std::runtime_error("bind/listen on 127.0.0.1 failed");
  }
  socklen_t len = sizeof addr;
  ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
  port_ = ntohs(addr.sin_port);
  acceptor_ = std::thread([this] { accept_loop(); });
}

TestServer::~TestServer() {
  stop_ = true;
  acceptor_.join();
  for (auto& w : workers_) w.join();
  ::close(listen_fd_);
}

std::vector<TestRequest> TestServer::requests() const {
  std::lock_guard lock(mutex_);
  return requests_;
}

bool TestServer::sleep_unless_stopped(std::chrono::milliseconds d) const {
  const auto end = std::chrono::steady_clock::now() + d;
  while (std::chrono::steady_clock::now() < end) {
    if (stop_) return false;
    std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(kPollSlice, end - std::chrono::steady_clock::now()));
  }
  return !stop_;
}

void TestServer::accept_loop() {
  while (!stop_) {
    pollfd p{listen_fd_, POLLIN, 0};
    if (::poll(&p, 1, int(kPollSlice.count())) <= 0) continue;
    int fd = ::accept(listen_fd_, nullptr, nullptr);
    if (fd < 0) continue;
    std::lock_guard lock(mutex_);
    workers_.emplace_back([this, fd] {
      serve(fd);
      ::close(fd);
    });
  }
}

void TestServer::serve(int fd) {
  TestRequest req;
  std::string data;
  char buf[65536];
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kReadTimeoutMs);
  size_t header_end = std::string::npos;
  size_t content_length = 0;
  while (!stop_ && std::chrono::steady_clock::now() < deadline) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, int(kPollSlice.count())) <= 0) continue;
    ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) return;
    data.append(buf, size_t(n));
    if (header_end == std::string::npos) {
      header_end = data.find("\r\n\r\n");
      if (header_end == std::string::npos) continue;
      size_t line_end = data.find("\r\n");
      std::string first = data.substr(0, line_end);
      req.method = first.substr(0, first.find(' '));
      req.path = first.substr(first.find(' ') + 1, first.rfind(' ') - first.find(' ') - 1);
      size_t pos = line_end + 2;
      while (pos < header_end) {
        size_t e = data.find("\r\n", pos);
        std::string line = data.substr(pos, e - pos);
        auto colon = line.find(':');
        if (colon != std::string::npos) {
          std::string name = line.substr(0, colon);
          std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return char(std::tolower(c)); });
          std::string value = line.substr(colon + 1);
          while (!value.empty() && value.front() == ' ') value.erase(value.begin());
          req.headers[name] = value;
        }
        pos = e + 2;
      }
      if (auto it = req.headers.find("content-length"); it != req.headers.end()) content_length = std::stoul(it->second);
    }
    if (header_end != std::string::npos && data.size() >= header_end + 4 + content_length) break;
  }
  if (header_end == std::string::npos) return;
  req.body = data.substr(header_end + 4, content_length);
  req.received = std::chrono::steady_clock::now();
  int index;
  {
    std::lock_guard lock(mutex_);
    index = next_index_++;
    requests_.push_back(req);
  }
  const int now_in_flight = ++in_flight_;
  int seen = max_concurrent_.load();
  while (now_in_flight > seen && !max_concurrent_.compare_exchange_weak(seen, now_in_flight)) {}
  TestResponse resp = handler_(req, index);
  // Leaves the in-flight count before the last byte goes out: once the client
  // has the whole reply, this request no longer counts as concurrent.
  bool counted = true;
  auto leave = [&] {
    if (counted) --in_flight_;
    counted = false;
  };
  if (sleep_unless_stopped(resp.delay)) {
    std::string head = "HTTP/1.1 " + std::to_string(resp.status) + " " + reason_phrase(resp.status) + "\r\n";
    for (const auto& [k, v] : resp.headers) head += k + ": " + v + "\r\n";
    head += "Connection: close\r\n";
    if (resp.chunks.empty()) {
      const long length = resp.declared_length >= 0 ? resp.declared_length : long(resp.body.size());
      head += "Content-Length: " + std::to_string(length) + "\r\n\r\n";
      leave();
      send_all(fd, head + resp.body);
    } else if (send_all(fd, head + "\r\n")) {
      for (size_t i = 0; i < resp.chunks.size(); ++i) {
        if (!sleep_unless_stopped(resp.chunk_delay)) break;
        if (i + 1 == resp.chunks.size()) leave();
        if (!send_all(fd, resp.chunks[i])) break;
      }
    }
  }
  leave();
}

std::string openai_reply(const std::string& content, long long prompt_tokens, long long completion_tokens,
                         const std::string& reasoning, const std::string& model) {
  nlohmann::json message = {{"role", "assistant"}, {"content", content}};
  if (!reasoning.empty()) message["reasoning_content"] = reasoning;
  nlohmann::json j = {{"id", "chatcmpl-test"},
                      {"object", "chat.completion"},
                      {"model", model},
                      {"choices", {{{"index", 0}, {"message", message}, {"finish_reason", "stop"}}}},
                      {"usage",
                       {{"prompt_tokens", prompt_tokens},
                        {"completion_tokens", completion_tokens},
                        {"total_tokens", prompt_tokens + completion_tokens},
                        {"completion_tokens_details", {{"reasoning_tokens", reasoning.empty() ? 0 : 3}}}}}};
  return j.dump();
}

std::string naive_kernel(int variant) {
  std::ifstream in(std::string(TESSERA_SOURCE_DIR) + "/examples/hgemm_naive.cu");
  std::stringstream text;
  text << in.rdbuf();
  std::string source = text.str();
  const std::string loop = "  for (int k = 0; k < p.K; ++k)";
  const auto at = source.find(loop);
  if (at == std::string::npos) throw std::runtime_error("examples/hgemm_naive.cu has changed: no k loop");
  source.insert(at, "#pragma unroll " + std::to_string(variant + 1) + "\n");
  return source;
}

std::string kernel_reply(int variant) {
  return "Variant " + std::to_string(variant) + ".\n```cuda\n" + naive_kernel(variant) + "```\n";
}

ChatAsked parse_chat(const TestRequest& request) {
  ChatAsked a;
  a.body = nlohmann::json::parse(request.body, nullptr, false);
  if (!a.body.is_object()) return a;
  a.model = a.body.value("model", std::string());
  for (const auto& m : a.body.value("messages", nlohmann::json::array())) {
    const std::string content = m.value("content", std::string());
    a.prompt_chars += (long long)content.size();
    if (m.value("role", std::string()) == "user") a.user = content;
  }
  return a;
}

TestResponse billed_reply(const TestRequest& request, const std::string& content, double chars_per_token) {
  const ChatAsked asked = parse_chat(request);
  const auto prompt_tokens = (long long)(double(asked.prompt_chars) / chars_per_token) + 1;
  const auto completion_tokens = (long long)content.size() / 4 + 1;
  return respond(200, openai_reply(content, prompt_tokens, completion_tokens, "", asked.model));
}

Handler distinct_kernels() {
  auto count = std::make_shared<std::atomic<int>>(0);
  return [count](const TestRequest& r, int) { return billed_reply(r, kernel_reply((*count)++)); };
}

TestResponse error_reply(int status, const std::string& message) {
  return respond(status, nlohmann::json{{"error", {{"message", message}, {"type", "invalid_request_error"}}}}.dump());
}

int run_tessera(const std::string& args, std::string* output, const std::string& env) {
  const std::string cmd = "env " + env + " " + std::string(TESSERA_BINARY) + " " + args + " 2>&1";
  FILE* p = ::popen(cmd.c_str(), "r");
  if (p == nullptr) return -1;
  char buf[4096];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) output->append(buf, n);
  const int status = ::pclose(p);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace tessera::testing
