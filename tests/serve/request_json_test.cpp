// HTTP evaluation options: every key of EvalOptions (core/wire.hpp) can be
// set in a request's "options", an unknown one is refused with its name, and
// none may check less than the server does.
#include <gtest/gtest.h>

#include <string>

#include "fakes.hpp"
#include "serve/detail/request_json.hpp"

namespace tessera::serve::detail {
namespace {

std::string error_of(const nlohmann::json& options, const EvalOptions& base) {
  try {
    (void)read_eval_options(options, base, "evaluate.options");
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), Error::Kind::bad_input);
    return e.what();
  }
  return "no error";
}

TEST(RequestJson, EveryEvaluationOptionCanBeSet) {
  EvalOptions server;
  server.verify_trials = 4;
  server.hot = false;
  const nlohmann::json asked = {{"compile_only", true}, {"counters", false},    {"counter_set", "fast"},
                                {"baselines", false},   {"timing", true},       {"hot", true},
                                {"verify_trials", 6},   {"shape_generic", true}, {"rank_by", "cold"}};
  // The request names every field the struct has.
  const nlohmann::json fields = EvalOptions{};
  for (const auto& [key, value] : fields.items()) EXPECT_TRUE(asked.contains(key)) << key;
  const EvalOptions o = read_eval_options(asked, server, "evaluate.options");
  EXPECT_TRUE(o.compile_only);
  EXPECT_FALSE(o.counters);
  EXPECT_EQ(o.counter_set, "fast");
  EXPECT_FALSE(o.baselines);
  EXPECT_TRUE(o.timing);
  EXPECT_TRUE(o.hot);
  EXPECT_EQ(o.verify_trials, 6);
  EXPECT_TRUE(o.shape_generic);
  EXPECT_EQ(o.rank_by, "cold");
}

TEST(RequestJson, AnUnknownOptionIsRefusedWithItsName) {
  const std::string msg = error_of({{"verify_trails", 8}}, {});
  EXPECT_NE(msg.find("unknown key 'verify_trails'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("evaluate.options"), std::string::npos) << msg;
}

TEST(RequestJson, NoOptionChecksLessThanTheServer) {
  EvalOptions server;
  server.verify_trials = 6;
  server.shape_generic = true;
  EXPECT_NE(error_of({{"verify_trials", 5}}, server).find("verify_trials"), std::string::npos);
  EXPECT_NE(error_of({{"timing", false}}, server).find("timing"), std::string::npos);
  EXPECT_NE(error_of({{"shape_generic", false}}, server).find("shape_generic"), std::string::npos);
  server.timing = false;  // a verify-only server: asking for no timing weakens nothing
  EXPECT_EQ(error_of({{"timing", false}}, server), "no error");
}

}  // namespace
}  // namespace tessera::serve::detail

namespace tessera::serve::testing {
namespace {

TEST(Service, TakesEveryEvaluationOptionAndNamesAnUnknownOne) {
  auto ledger = std::make_shared<Ledger>();
  Service s(test_options(), fake_backend(ledger));
  const nlohmann::json all = {{"task", "64x64x64"},
                              {"action", "kernel A"},
                              {"options",
                               {{"compile_only", false}, {"counters", false}, {"counter_set", "fast"},
                                {"baselines", true}, {"timing", true}, {"hot", false}, {"verify_trials", 8},
                                {"shape_generic", true}, {"rank_by", "cold"}}}};
  const auto ok = call(s, "POST", "/v1/evaluate", all.dump());
  EXPECT_EQ(ok.status, 200) << ok.body;
  const auto bad = call(s, "POST", "/v1/evaluate",
                        R"({"task":"64x64x64","action":"kernel A","options":{"infra_retries":3}})");
  EXPECT_EQ(bad.status, 400) << bad.body;
  EXPECT_NE(bad.body.find("unknown key 'infra_retries'"), std::string::npos) << bad.body;
}

}  // namespace
}  // namespace tessera::serve::testing
