// `tessera serve` as a user starts it: clear errors for bad options, and a
// compile-only server that answers a session over loopback and exits 0 on
// SIGTERM.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <vector>
#include <regex>
#include <string>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>
#include <nlohmann/json.hpp>

#include "tests/testing.hpp"

namespace {

namespace net = boost::asio;
using tcp = net::ip::tcp;

// `tessera <args>` as a child whose output (stdout and stderr) is read line by line.
class Spawned {
public:
  explicit Spawned(const std::vector<std::string>& args) {
    int out[2];
    if (pipe(out) != 0) return;
    pid_ = fork();
    if (pid_ == 0) {
      dup2(out[1], 1);
      dup2(out[1], 2);
      close(out[0]);
      std::vector<char*> argv = {const_cast<char*>(TESSERA_BINARY)};
      for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
      argv.push_back(nullptr);
      execv(TESSERA_BINARY, argv.data());
      _exit(127);
    }
    close(out[1]);
    out_ = fdopen(out[0], "r");
  }
  ~Spawned() {
    if (pid_ > 0 && code_ < 0) {
      kill(pid_, SIGKILL);
      (void)finish();
    }
  }
  // The next line of output; false at the end.
  bool line(std::string& text) {
    std::array<char, 1024> buf{};
    if (!out_ || !fgets(buf.data(), buf.size(), out_)) return false;
    text = buf.data();
    log += text;
    return true;
  }
  // Reads the rest of the output and waits: the exit code (-1 when killed).
  int finish() {
    std::string rest;
    while (line(rest)) {}
    if (out_) fclose(out_);
    out_ = nullptr;
    int status = 0;
    waitpid(pid_, &status, 0);
    code_ = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return code_;
  }
  pid_t pid() const { return pid_; }
  std::string log;

private:
  pid_t pid_ = -1;
  FILE* out_ = nullptr;
  int code_ = -1;
};

TEST(ServeCli, BadOptionsGetOneClearLine) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"serve", "--gpus", "x", "--port", "0"}, "--gpus takes"},
      {{"serve", "--host", "not-an-ip", "--port", "0", "--mode", "compile_only"}, "not an IP address"},
      {{"serve", "--env-config", "/nonexistent.json", "--mode", "compile_only", "--port", "0"}, "nonexistent"},
      {{"serve", "--shape", "12", "--mode", "compile_only", "--port", "0"}, "shape"}};
  for (const auto& [args, needle] : cases) {
    Spawned s(args);
    EXPECT_EQ(s.finish(), 2) << args[1] << "\n" << s.log;
    EXPECT_NE(s.log.find("error: "), std::string::npos) << s.log;
    EXPECT_NE(s.log.find(needle), std::string::npos) << s.log;
  }
}

// One HTTP/1.1 exchange on a fresh connection; the body of the answer.
std::string http(unsigned short port, const std::string& method, const std::string& target, const std::string& body) {
  net::io_context io;
  tcp::socket s(io);
  s.connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), port));
  const std::string req = method + " " + target + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: " +
                          std::to_string(body.size()) + "\r\n\r\n" + body;
  net::write(s, net::buffer(req));
  std::string data;
  std::array<char, 4096> buf{};
  boost::system::error_code ec;
  for (std::size_t n; (n = s.read_some(net::buffer(buf), ec)) > 0 || !ec;) data.append(buf.data(), n);
  const auto at = data.find("\r\n\r\n");
  return at == std::string::npos ? data : data.substr(at + 4);
}

// The port a starting server prints; 0 when it exited first.
unsigned short listening_port(Spawned& server) {
  const std::regex listening("listening on http://127\\.0\\.0\\.1:([0-9]+)");
  for (std::string text; server.line(text);) {
    std::smatch m;
    if (std::regex_search(text, m, listening)) return static_cast<unsigned short>(std::stoi(m[1]));
  }
  return 0;
}

TEST(ServeCli, ServesASessionAndExitsZeroOnSigterm) {
  Spawned server({"serve", "--port", "0", "--mode", "compile_only", "--gpus", "0"});
  const unsigned short port = listening_port(server);
  ASSERT_NE(port, 0) << server.log;

  const auto created = nlohmann::json::parse(http(port, "POST", "/v1/sessions", R"({"task":"128x128x128","seed":1})"));
  const std::string id = created.at("session_id");
  EXPECT_NE(created.at("observation").get<std::string>().find("128"), std::string::npos);
  const auto step = nlohmann::json::parse(http(port, "POST", "/v1/sessions/" + id + "/step", R"({"action":"no kernel"})"));
  EXPECT_EQ(step.at("reward"), -1.0) << step.dump();
  EXPECT_EQ(step.at("info").at("turn"), 1);
  EXPECT_NE(http(port, "GET", "/metrics", "").find("tessera_evaluations_total{status=\"format_error\"} 1"),
            std::string::npos);

  kill(server.pid(), SIGTERM);
  EXPECT_EQ(server.finish(), 0) << server.log;
  EXPECT_NE(server.log.find("draining"), std::string::npos) << server.log;
}

// On a GPU: a real kernel verified and timed through the service, its stages
// in the record and in /metrics.
TEST(ServeGpu, VerifiesAndTimesARealKernelThroughTheService) {
  TESSERA_REQUIRE_GPU();
  Spawned server({"serve", "--port", "0", "--mode", "full", "--gpus", "0"});
  const unsigned short port = listening_port(server);
  ASSERT_NE(port, 0) << server.log;
  std::ifstream in(std::string(TESSERA_SOURCE_DIR) + "/examples/hgemm_naive.cu");
  const std::string source((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const nlohmann::json req = {{"task", "512x512x512"}, {"action", source}, {"options", {{"counters", false}}}};
  const auto rec = nlohmann::json::parse(http(port, "POST", "/v1/evaluate", req.dump()));
  EXPECT_EQ(rec.at("status"), "ok") << rec.dump().substr(0, 3000);
  EXPECT_GT(rec.at("result").at("speedup").get<double>(), 0);
  EXPECT_TRUE(rec.at("result").at("phase_ms").contains("verify"));
  EXPECT_TRUE(rec.at("result").at("phase_ms").contains("timing"));
  const std::string metrics = http(port, "GET", "/metrics", "");
  EXPECT_NE(metrics.find("tessera_stage_seconds_count{stage=\"verify\"} 1"), std::string::npos) << metrics;
  EXPECT_NE(metrics.find("tessera_stage_seconds_count{stage=\"time\"} 1"), std::string::npos) << metrics;
  EXPECT_EQ(metrics.find("tessera_gpu_busy_fraction{gpu=\"0\"} 0\n"), std::string::npos) << metrics;
  kill(server.pid(), SIGTERM);
  EXPECT_EQ(server.finish(), 0) << server.log;
}

}  // namespace
