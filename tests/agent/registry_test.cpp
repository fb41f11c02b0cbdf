// The proposer registry: names, options and the errors a user sees.
#include <gtest/gtest.h>

#include "agent/registry.hpp"
#include "core/error.hpp"

namespace tessera::agent {
namespace {

std::string bad_input_message(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), Error::Kind::bad_input) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "expected a bad_input error";
  return "";
}

EndpointConfig endpoint(const std::string& name, const std::string& model) {
  EndpointConfig e;
  e.name = name;
  e.base_url = "http://127.0.0.1:1/v1";
  e.model = model;
  return e;
}

TEST(ProposerRegistry, BuiltinKnowsTileLlmAndReplay) {
  const auto& r = ProposerRegistry::builtin();
  EXPECT_EQ(r.names(), (std::vector<std::string>{"tile", "llm", "replay"}));
  for (const auto& n : r.names()) EXPECT_FALSE(r.summary(n).empty()) << n;
  ProposerOptions o;
  o.seed = 3;
  o.arch = "sm_80";
  const BuiltProposer tile = r.build("tile", o);
  EXPECT_EQ(tile.name, "tile");
  EXPECT_EQ(tile.proposer->name(), "tile");
  EXPECT_EQ(tile.models, std::vector<std::string>{""});
}

TEST(ProposerRegistry, AnUnknownNameListsTheKnownOnes) {
  const std::string msg = bad_input_message([] { ProposerRegistry::builtin().build("genetic", {}); });
  EXPECT_NE(msg.find("unknown proposer 'genetic' (known: tile, llm, replay)"), std::string::npos) << msg;
}

TEST(ProposerRegistry, EachProposerSaysWhichOptionItLacks) {
  const auto& r = ProposerRegistry::builtin();
  std::string msg = bad_input_message([&] { r.build("llm", {}); });
  EXPECT_NE(msg.find("--config FILE"), std::string::npos) << msg;
  EXPECT_NE(msg.find("TESSERA_LLM_BASE_URL"), std::string::npos) << msg;
  msg = bad_input_message([&] { r.build("replay", {}); });
  EXPECT_NE(msg.find("--replay PATH"), std::string::npos) << msg;
  msg = bad_input_message([&] { r.build_all({}, {}); });
  EXPECT_NE(msg.find("at least one proposer"), std::string::npos) << msg;
  msg = bad_input_message([&] { r.build_all({"tile", "tile"}, {}); });
  EXPECT_NE(msg.find("'tile' is listed twice"), std::string::npos) << msg;
}

TEST(ProposerRegistry, AnEnsembleGivesOneModelArmPerMember) {
  ProposerOptions o;
  o.llm = LlmProposerOptions{};
  o.llm->endpoints = {endpoint("fast", "qwen"), endpoint("", "claude-sonnet-4-5")};
  const auto built = ProposerRegistry::builtin().build_all({"tile", "llm"}, o);
  ASSERT_EQ(built.size(), 2u);
  EXPECT_EQ(built[1].name, "llm");
  EXPECT_EQ(built[1].models, (std::vector<std::string>{"fast", "claude-sonnet-4-5"}));
}

class NamedProposer final : public Proposer {
public:
  explicit NamedProposer(std::string n) : name_(std::move(n)) {}
  std::string name() const override { return name_; }
  Proposal propose(const ProposalContext&) override { return {}; }

private:
  std::string name_;
};

TEST(ProposerRegistry, OtherFrontEndsRegisterTheirOwn) {
  ProposerRegistry r;
  r.add("scripted", "a fixed policy", [](const ProposerOptions& o) {
    BuiltProposer b;
    b.proposer = std::make_shared<NamedProposer>("scripted-" + std::to_string(o.seed));
    b.models = {};
    return b;
  });
  ProposerOptions o;
  o.seed = 9;
  const BuiltProposer b = r.build("scripted", o);
  EXPECT_EQ(b.name, "scripted");
  EXPECT_EQ(b.proposer->name(), "scripted-9");
  EXPECT_EQ(b.models, std::vector<std::string>{""}) << "no models: the proposer's own";
  EXPECT_THROW(r.add("scripted", "again", [](const ProposerOptions&) { return BuiltProposer{}; }), Error);
  r.add("empty", "builds nothing", [](const ProposerOptions&) { return BuiltProposer{}; });
  EXPECT_THROW(r.build("empty", {}), Error);
}

}  // namespace
}  // namespace tessera::agent
