// `tessera doctor` states which protections are active on this machine, as
// measured by its probe, in the table and in --json; a user who turned them
// off (or a kernel without them) gets a warning saying so.
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

namespace {

// `env`: NAME=value words put in front of the command.
std::string run(const std::string& env, const std::string& args) {
  const std::string cmd = "env " + env + " timeout 120 " + std::string(TESSERA_BINARY) + " doctor " + args + " 2>&1";
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return out;
  std::array<char, 4096> buf{};
  while (fgets(buf.data(), buf.size(), p)) out += buf.data();
  pclose(p);
  return out;
}

nlohmann::json doctor_json(const std::string& env) {
  const std::string out = run(env, "--json");
  const auto brace = out.find('{');
  return nlohmann::json::parse(brace == std::string::npos ? "" : out.substr(brace), nullptr, false);
}

TEST(DoctorCli, ReportsEveryProtectionAsMeasured) {
  std::string text = "\n";  // every row starts a line, the first one included
  text += run("", "");
  for (const char* row : {"seccomp", "Landlock", "rlimits", "own session", "GPU isolation", "environment"}) {
    std::string line_start = "\n";
    line_start += row;
    EXPECT_NE(text.find(line_start), std::string::npos) << row << " missing:\n" << text;
  }
  const auto j = doctor_json("OPENAI_API_KEY=sk-doctor-test");
  ASSERT_FALSE(j.is_discarded());
  const auto& p = j.at("protections");
  const auto& rows = j.at("rows");
  EXPECT_EQ(rows.at("seccomp").get<std::string>().rfind(p.at("seccomp").get<bool>() ? "on" : "OFF", 0), 0u) << rows;
  EXPECT_EQ(rows.at("Landlock").get<std::string>().rfind(p.at("landlock").get<bool>() ? "on" : "OFF", 0), 0u) << rows;
  EXPECT_TRUE(p.at("rlimits").get<bool>()) << p;
  EXPECT_NE(rows.at("environment").get<std::string>().find("OPENAI_API_KEY"), std::string::npos)
      << "doctor names the secrets it keeps from candidates (never their values): " << rows;
  EXPECT_EQ(j.dump().find("sk-doctor-test"), std::string::npos);
  if (!p.at("seccomp").get<bool>() || !p.at("landlock").get<bool>()) {
    EXPECT_FALSE(j.at("warnings").empty()) << "a machine without them must say so";
  }
}

TEST(DoctorCli, SaysWhenTheUserTurnedConfinementOff) {
  const auto j = doctor_json("TESSERA_CONFINE=0");
  ASSERT_FALSE(j.is_discarded());
  EXPECT_FALSE(j.at("protections").at("seccomp").get<bool>());
  EXPECT_EQ(j.at("rows").at("seccomp"), "OFF");
  ASSERT_FALSE(j.at("warnings").empty());
  EXPECT_NE(j.at("warnings").dump().find("TESSERA_CONFINE"), std::string::npos) << j.at("warnings");
}

// Which learned cost model ranks tunes: without a GPU, every stored one (a
// user's folder's and the shipped ones); with one, the model of its kind.
TEST(DoctorCli, NamesTheCostModels) {
  const auto dir = std::filesystem::temp_directory_path() / "tessera_doctor_models_test";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir / "models");
  std::filesystem::copy_file(std::filesystem::path(TESSERA_SOURCE_DIR) / "tests" / "tile" / "cost_model_v1.json",
                             dir / "models" / "h100.json");
  const auto j = doctor_json("TESSERA_COST_MODEL_DIR=" + (dir / "models").string() +
                             " TESSERA_CACHE_DIR=" + (dir / "cache").string());
  std::filesystem::remove_all(dir);
  ASSERT_FALSE(j.is_discarded());
  const auto& rows = j.at("rows");
  if (rows.contains("cost models")) {  // no GPU
    const std::string listed = rows.at("cost models").get<std::string>();
    const auto user = listed.find("tessera_doctor_models_test/models/h100.json");
    const auto shipped = listed.find("datasets/cost_models/h200.json");
    EXPECT_NE(user, std::string::npos) << listed;
    EXPECT_NE(shipped, std::string::npos) << listed;
    EXPECT_LT(user, shipped) << "the user's folder is read before the shipped models: " << listed;
  } else {
    ASSERT_TRUE(rows.contains("cost model")) << rows;
    const std::string used = rows.at("cost model").get<std::string>();
    EXPECT_TRUE(used.rfind("learned", 0) == 0 || used.rfind("analytical", 0) == 0) << used;
  }
}

}  // namespace
