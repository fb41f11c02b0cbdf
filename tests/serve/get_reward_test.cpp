// POST /get_reward when the query does not hold the prompt as sent: the
// response is still found (and the fallback counted in extra_logs), or the
// sample is masked, never scored as the whole query; a missing task is a
// 400 that says how to give one; tasks spelled as tessera prints them.
#include <gtest/gtest.h>

#include "fakes.hpp"

namespace tessera::serve::testing {
namespace {

nlohmann::json body_of(const HttpResponse& r) { return nlohmann::json::parse(r.body); }

std::string long_prompt() {
  return "<|im_start|>user\nWrite an HGEMM kernel. " + std::string(2000, 'p') + "<|im_end|>\n<|im_start|>assistant\n";
}

TEST(GetReward, TruncatedAndUnmatchedQueriesAreFoundOrMaskedAndSaySo) {
  auto ledger = std::make_shared<Ledger>();
  Service s(test_options(), fake_backend(ledger));
  const auto prompt = long_prompt();
  const nlohmann::json req = {
      {"query",
       {prompt + "kernel A<|im_end|>",                          // whole prompt
        prompt.substr(1500) + "kernel B<|im_end|>",             // left-truncated
        "<|im_start|>assistant\nkernel C<end_of_turn>",          // only the turn marker
        "text that holds neither the prompt nor a turn marker"}},  // nothing
      {"prompts", {prompt, prompt, prompt, prompt}},
      {"labels", {"64x64x64", "hgemm_64x64x64_TN_none", "64x64x64", "64x64x64"}}};
  const auto r = call(s, "POST", "/get_reward", req.dump());
  ASSERT_EQ(r.status, 200) << r.body;
  const auto j = body_of(r);
  EXPECT_EQ(j["extra_logs"]["response_fallback"], nlohmann::json({0, 1, 2, 3}));
  EXPECT_EQ(j["extra_logs"]["masked"], nlohmann::json({0, 0, 0, 1}));
  EXPECT_EQ(j["extra_logs"]["task_fallback"], nlohmann::json({0, 0, 0, 0}));
  EXPECT_EQ(j["rewards"][3].get<double>(), kDefaultMaskedReward) << "masked, not a format failure";
  for (const char* k : {"kernel A", "kernel B", "kernel C"}) EXPECT_EQ(ledger->count(k), 1) << k;
  EXPECT_EQ(ledger->total(), 3) << "the lost response is not evaluated";
}

TEST(GetReward, EveryResponseLostStillAnswers) {
  auto ledger = std::make_shared<Ledger>();
  Service s(test_options(), fake_backend(ledger));
  const nlohmann::json req = {{"query", {"nothing here"}},
                              {"prompts", {"a prompt of more than thirty-two characters"}},
                              {"labels", {"64x64x64"}}};
  const auto r = call(s, "POST", "/get_reward", req.dump());
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(body_of(r)["extra_logs"]["masked"], nlohmann::json({1}));
  EXPECT_EQ(ledger->total(), 0);
}

TEST(GetReward, AMissingTaskSaysHowToGiveOneAndTheServersTaskIsCounted) {
  auto ledger = std::make_shared<Ledger>();
  Service s(test_options(), fake_backend(ledger));
  const auto r = call(s, "POST", "/get_reward", R"({"query":["k"],"prompts":[""],"labels":[""]})");
  EXPECT_EQ(r.status, 400);
  EXPECT_NE(r.body.find("--data.label_key"), std::string::npos) << r.body;
  EXPECT_NE(r.body.find("--task"), std::string::npos) << r.body;
  auto o = test_options();
  o.default_task = task_from_shape("64x64x64");
  Service with_task(o, fake_backend(ledger));
  const auto ok = call(with_task, "POST", "/get_reward", R"({"query":["k1","k2"],"labels":["","64x64x64"]})");
  ASSERT_EQ(ok.status, 200) << ok.body;
  EXPECT_EQ(body_of(ok)["extra_logs"]["task_fallback"], nlohmann::json({1, 0}));
}

TEST(GetReward, EverySpellingOfATaskThatTesseraPrints) {
  auto ledger = std::make_shared<Ledger>();
  Service s(test_options(), fake_backend(ledger));
  const nlohmann::json req = {
      {"query", {"k1", "k2", "k3", "k4"}},
      {"labels",
       {"hgemm_512x512x512_TN_none", "512x512x512", R"({"op":"hgemm","m":512,"n":512,"k":512})",
        "hgemm_512x256x128_NN_bias_relu"}}};
  const auto r = call(s, "POST", "/get_reward", req.dump());
  EXPECT_EQ(r.status, 200) << r.body;
  const auto bad = call(s, "POST", "/get_reward", R"({"query":["k"],"labels":["hgemm_512x512_TN_none"]})");
  EXPECT_EQ(bad.status, 400);
  EXPECT_NE(bad.body.find("task id"), std::string::npos) << bad.body;
}

}  // namespace
}  // namespace tessera::serve::testing
