// The harness's reading of the worker's lines (harness/detail/worker_wire.hpp):
// the same decisions as before it was factored out, and no exception for a
// malformed line (a broken worker must not take the harness down).
#include <gtest/gtest.h>

#include "harness/detail/worker_wire.hpp"

namespace tessera::detail {
namespace {

using K = WorkerLine::Kind;

TEST(WorkerWire, TakesCompleteLinesOnly) {
  std::string buf = "{\"a\":1}\n{\"b\"";
  auto first = take_line(buf);
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(*first, "{\"a\":1}");
  EXPECT_FALSE(take_line(buf).has_value());
  EXPECT_EQ(buf, "{\"b\"") << "a partial line waits for the rest";
  buf += ":2}\n\n";
  EXPECT_EQ(*take_line(buf), "{\"b\":2}");
  EXPECT_EQ(*take_line(buf), "");
  EXPECT_TRUE(buf.empty());
}

TEST(WorkerWire, ClassifiesTheProtocolsEvents) {
  auto hb = classify_worker_line(R"({"event":"heartbeat","phase":"verify 2/5"})", "result");
  EXPECT_EQ(hb.kind, K::heartbeat);
  EXPECT_EQ(hb.phase, "verify 2/5");
  auto fatal = classify_worker_line(R"({"event":"fatal","reason":"no GPU"})", "result");
  EXPECT_EQ(fatal.kind, K::fatal);
  EXPECT_EQ(fatal.reason, "no GPU");
  EXPECT_EQ(classify_worker_line(R"({"event":"fatal"})", "result").reason, "worker failed");
  auto answer = classify_worker_line(R"({"event":"result","result":{"status":"ok"},"healthy":true})", "result");
  EXPECT_EQ(answer.kind, K::answer);
  EXPECT_EQ(answer.event.at("result").at("status"), "ok");
  EXPECT_EQ(classify_worker_line(R"({"event":"hello"})", "result").kind, K::other);
  auto ready = classify_worker_line(R"({"event":"ready","protections":{"seccomp":true}})", "ready");
  EXPECT_EQ(ready.kind, K::answer);
  EXPECT_TRUE(ready.event.at("protections").at("seccomp").get<bool>());
}

TEST(WorkerWire, MalformedLinesAreIgnoredNotThrown) {
  for (const char* line : {"", "not json", "{\"event\":", "42", "\"heartbeat\"", "[1,2]", "null", "{}",
                           "{\"event\":7}", "{\"event\":null}", "{\"event\":[\"result\"]}"}) {
    WorkerLine l;
    EXPECT_NO_THROW(l = classify_worker_line(line, "result")) << line;
    EXPECT_EQ(l.kind, K::ignored) << line;
  }
  // Known events with fields of the wrong type keep their meaning, with defaults.
  auto hb = classify_worker_line(R"({"event":"heartbeat","phase":3})", "result");
  EXPECT_EQ(hb.kind, K::heartbeat);
  EXPECT_EQ(hb.phase, "");
  EXPECT_EQ(classify_worker_line(R"({"event":"fatal","reason":{}})", "result").reason, "worker failed");
}

}  // namespace
}  // namespace tessera::detail
