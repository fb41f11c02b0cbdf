// `tessera agent ping` and `propose` with an endpoint file of several models.
#include <unistd.h>

#include <filesystem>

#include <gtest/gtest.h>

#include "core/fs.hpp"
#include "tests/agent/test_server.hpp"

namespace tessera::agent {
namespace {

namespace fs = std::filesystem;
using testing::TestRequest;
using testing::TestServer;

#define REQUIRE_BINARY() \
  if (!fs::exists(TESSERA_BINARY)) GTEST_SKIP() << "the tessera binary is not built: " << TESSERA_BINARY

// Serves model-a and model-b; any other model is unknown (404).
TestServer two_models() {
  return TestServer([](const TestRequest& r, int) {
    const auto asked = testing::parse_chat(r);
    if (asked.model != "model-a" && asked.model != "model-b")
      return testing::error_reply(404, "The model '" + asked.model + "' does not exist");
    return testing::billed_reply(r, asked.model == "model-a" ? "I am A." : testing::kernel_reply(2));
  });
}

fs::path endpoints_file(const std::string& name, const TestServer& server, const std::vector<std::string>& models) {
  nlohmann::json endpoints = nlohmann::json::array();
  for (const auto& m : models)
    endpoints.push_back({{"name", "arm-" + m}, {"base_url", server.base_url()}, {"model", m}, {"api_key_env", ""}});
  const fs::path p = fs::temp_directory_path() / ("tessera_agent_cli_" + name + "_" + std::to_string(::getpid()) + ".json");
  atomic_write_file(p, nlohmann::json{{"endpoints", endpoints}}.dump());
  return p;
}

TEST(AgentCli, PingTriesEveryEndpointOfAFile) {
  REQUIRE_BINARY();
  TestServer server = two_models();
  const auto cfg = endpoints_file("ping", server, {"model-a", "model-x", "model-b"});
  std::string out;
  EXPECT_EQ(testing::run_tessera("agent ping --config " + cfg.string(), &out), 1) << out;
  EXPECT_NE(out.find("== arm-model-a (1 of 3) =="), std::string::npos) << out;
  EXPECT_NE(out.find("== arm-model-b (3 of 3) =="), std::string::npos) << out;
  EXPECT_NE(out.find("The model 'model-x' does not exist"), std::string::npos) << out;
  EXPECT_NE(out.find("2 of 3 endpoints answered"), std::string::npos) << out;
  EXPECT_NE(out.find("cost:       unknown (model not in the price table)"), std::string::npos) << out;
  EXPECT_EQ(server.requests().size(), 3u);
  out.clear();
  EXPECT_EQ(testing::run_tessera("agent ping --config " + cfg.string() + " --model arm-model-b", &out), 0) << out;
  EXPECT_EQ(server.requests().size(), 4u);
  out.clear();
  EXPECT_EQ(testing::run_tessera("agent ping --config " + cfg.string() + " --model nope", &out), 2) << out;
  EXPECT_NE(out.find("it has: arm-model-a, arm-model-x, arm-model-b"), std::string::npos) << out;
  fs::remove(cfg);
}

TEST(AgentCli, ProposeUsesTheEnsembleAndSaysWhenACostIsUnknown) {
  REQUIRE_BINARY();
  TestServer server = two_models();
  const auto cfg = endpoints_file("propose", server, {"model-a", "model-b"});
  std::string out;
  EXPECT_EQ(testing::run_tessera("agent propose --config " + cfg.string() +
                                     " --model arm-model-b --shape 256x256x256 --strategy tiling",
                                 &out),
            0)
      << out;
  EXPECT_NE(out.find("endpoint arm-model-b, model model-b"), std::string::npos) << out;
  EXPECT_NE(out.find("cost unknown (model not in the price table)"), std::string::npos) << out;
  EXPECT_NE(out.find("tessera_hgemm"), std::string::npos) << "the candidate on stdout\n" << out;
  ASSERT_EQ(server.requests().size(), 1u);
  EXPECT_EQ(testing::parse_chat(server.requests()[0]).model, "model-b");
  fs::remove(cfg);
}

}  // namespace
}  // namespace tessera::agent
