// `tessera serve` as a user starts it: clear errors for bad options, and a
// compile-only server that answers a session over loopback and exits 0 on
// SIGTERM.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <regex>
#include <string>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>
#include <nlohmann/json.hpp>

namespace {

namespace net = boost::asio;
using tcp = net::ip::tcp;

struct Ran {
  int code = -1;
  std::string out;
};

Ran run(const std::string& args) {
  const std::string cmd = "timeout 60 " + std::string(TESSERA_BINARY) + " " + args + " 2>&1";
  Ran r;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  std::array<char, 4096> buf{};
  while (fgets(buf.data(), buf.size(), p)) r.out += buf.data();
  const int status = pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

TEST(ServeCli, BadOptionsGetOneClearLine) {
  for (const auto& [args, needle] : std::vector<std::pair<std::string, std::string>>{
           {"serve --gpus x --port 0", "--gpus takes"},
           {"serve --host not-an-ip --port 0 --mode compile_only", "not an IP address"},
           {"serve --env-config /nonexistent.json --mode compile_only --port 0", "nonexistent"},
           {"serve --shape 12 --mode compile_only --port 0", "shape"}}) {
    const Ran r = run(args);
    EXPECT_EQ(r.code, 2) << args << "\n" << r.out;
    EXPECT_NE(r.out.find("error: "), std::string::npos) << args << "\n" << r.out;
    EXPECT_NE(r.out.find(needle), std::string::npos) << args << "\n" << r.out;
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

TEST(ServeCli, ServesASessionAndExitsZeroOnSigterm) {
  int out[2];
  ASSERT_EQ(pipe(out), 0);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    dup2(out[1], 1);
    dup2(out[1], 2);
    close(out[0]);
    execl(TESSERA_BINARY, TESSERA_BINARY, "serve", "--port", "0", "--mode", "compile_only", "--gpus", "0",
          static_cast<char*>(nullptr));
    _exit(127);
  }
  close(out[1]);
  FILE* f = fdopen(out[0], "r");
  std::string log;
  unsigned short port = 0;
  std::array<char, 1024> line{};
  const std::regex listening("listening on http://127\\.0\\.0\\.1:([0-9]+)");
  while (port == 0 && fgets(line.data(), line.size(), f)) {
    log += line.data();
    std::cmatch m;
    if (std::regex_search(line.data(), m, listening)) port = static_cast<unsigned short>(std::stoi(m[1]));
  }
  ASSERT_NE(port, 0) << log;

  const auto created = nlohmann::json::parse(http(port, "POST", "/v1/sessions", R"({"task":"128x128x128","seed":1})"));
  const std::string id = created.at("session_id");
  EXPECT_NE(created.at("observation").get<std::string>().find("128"), std::string::npos);
  const auto step = nlohmann::json::parse(http(port, "POST", "/v1/sessions/" + id + "/step", R"({"action":"no kernel"})"));
  EXPECT_EQ(step.at("reward"), -1.0) << step.dump();
  EXPECT_EQ(step.at("info").at("turn"), 1);
  EXPECT_NE(http(port, "GET", "/metrics", "").find("tessera_evaluations_total{status=\"format_error\"} 1"),
            std::string::npos);

  kill(pid, SIGTERM);
  while (fgets(line.data(), line.size(), f)) log += line.data();
  fclose(f);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << log;
  EXPECT_NE(log.find("draining"), std::string::npos) << log;
}

}  // namespace
