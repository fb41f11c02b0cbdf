// Request bodies and reply parsing for both wire formats, without a server.
#include <algorithm>

#include <gtest/gtest.h>

#include "agent/detail/wire.hpp"

namespace tessera::agent::detail {
namespace {

TEST(Wire, SseFramingHandlesCrlfMultiLineDataAndComments) {
  const auto events = sse_data(": hello\r\nevent: x\r\ndata: {\"a\":\r\ndata: 1}\r\n\r\nretry: 5\n\ndata:[DONE]");
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0], "{\"a\":\n1}");
  EXPECT_EQ(events[1], "[DONE]");
}

TEST(Wire, ErrorInsideAStreamIsAServerError) {
  const auto r = parse_reply(Provider::openai, "data: {\"error\": {\"message\": \"overloaded\"}}\n\n", true);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.kind, ChatErrorKind::server);
  EXPECT_NE(r.error.find("overloaded"), std::string::npos);
  const auto a = parse_reply(Provider::anthropic, "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n", true);
  EXPECT_EQ(a.kind, ChatErrorKind::server);
}

TEST(Wire, ToleratesNullContentArraysOfPartsAndAlternateReasoningFields) {
  auto r = parse_reply(Provider::openai, R"({"choices":[{"message":{"content":null,"reasoning":"r"},"finish_reason":"length"}]})", false);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.content, "");
  EXPECT_EQ(r.reasoning, "r");
  EXPECT_EQ(r.finish_reason, "length");
  r = parse_reply(Provider::openai, R"({"choices":[{"message":{"content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}}]})", false);
  ASSERT_TRUE(r.ok);
  EXPECT_EQ(r.content, "ab");
  // A server that streamed although asked not to is still understood.
  r = parse_reply(Provider::openai, "data: {\"choices\":[{\"delta\":{\"content\":\"x\"},\"finish_reason\":\"stop\"}]}\n\n", false);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.content, "x");
}

// Token counts a server wrote as floats: kept when a long long holds them,
// else 0 (a cast out of range would be undefined behaviour).
TEST(Wire, TokenCountsWrittenAsFloatsAreReadSafely) {
  const auto r = parse_reply(
      Provider::openai,
      R"({"choices":[{"message":{"content":"x"}}],"usage":{"prompt_tokens":1e300,"completion_tokens":12.0}})", false);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.usage.prompt_tokens, 0);
  EXPECT_EQ(r.usage.completion_tokens, 12);
}

TEST(Wire, BodiesFollowEachProvider) {
  EndpointConfig c;
  c.base_url = "http://h/v1/";
  c.model = "m";
  c.seed = 9;
  c.extra_body = {{"temperature", nullptr}, {"min_p", 0.1}};
  c.temperature = 0.5;
  ChatRequest r;
  r.messages = {{"system", "s"}, {"user", "u"}};
  EXPECT_EQ(request_url(c), "http://h/v1/chat/completions");
  auto body = build_body(c, r);
  EXPECT_FALSE(body.contains("temperature"));  // removed by the merge patch
  EXPECT_EQ(body["min_p"], 0.1);
  EXPECT_EQ(body["seed"], 9);
  EXPECT_EQ(body["messages"].size(), 2u);

  c.provider = Provider::anthropic;
  c.base_url = "https://api.anthropic.com/v1/messages";
  EXPECT_EQ(request_url(c), "https://api.anthropic.com/v1/messages");
  body = build_body(c, r);
  EXPECT_EQ(body["system"], "s");
  EXPECT_EQ(body["messages"].size(), 1u);
  EXPECT_FALSE(body.contains("seed"));
  EXPECT_EQ(body["max_tokens"], kDefaultAnthropicMaxTokens);
  const auto headers = build_headers(c, "key");
  EXPECT_NE(std::find(headers.begin(), headers.end(), "x-api-key: key"), headers.end());
}

TEST(Wire, ServerErrorMessagesAreOneLine) {
  EXPECT_EQ(server_error_message(R"({"error":{"message":"bad\nthing"}})"), "bad thing");
  EXPECT_EQ(server_error_message(R"({"detail":"Not Found"})"), "Not Found");
  EXPECT_EQ(server_error_message("<html>\n<body>502</body>"), "<html>");
  EXPECT_LE(server_error_message(std::string(5000, 'x')).size(), kMaxErrorChars + 3);
}

}  // namespace
}  // namespace tessera::agent::detail
