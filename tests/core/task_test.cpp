#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/task.hpp"

namespace tessera {
namespace {

TEST(Task, ParsesFullJson) {
  Task t = parse_task_string(R"({"op":"hgemm","m":4096,"n":2048,"k":512,"layout":"NN","acc":"f32","epilogue":"bias_gelu"})");
  EXPECT_EQ(t.m, 4096);
  EXPECT_EQ(t.n, 2048);
  EXPECT_EQ(t.k, 512);
  EXPECT_EQ(t.layout, Layout::NN);
  EXPECT_EQ(t.epilogue, Epilogue::bias_gelu);
  EXPECT_EQ(t.id(), "hgemm_4096x2048x512_NN_bias_gelu");
  EXPECT_DOUBLE_EQ(t.flops(), 2.0 * 4096 * 2048 * 512);
}

TEST(Task, RoundTripsThroughJson) {
  Task t = task_from_shape("100x5000x3000", "TN", "bias_relu");
  Task u = parse_task(to_json(t));
  EXPECT_EQ(u.id(), t.id());
}

TEST(Task, RejectsBadInputWithClearErrors) {
  auto expect_bad = [](const std::string& text, const std::string& needle) {
    try {
      parse_task_string(text);
      FAIL() << "accepted: " << text;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), Error::Kind::bad_input);
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  expect_bad("{", "not valid JSON");
  expect_bad("[1,2]", "must be a JSON object");
  expect_bad(R"({"m":1,"n":2})", "missing 'k'");
  expect_bad(R"({"m":1,"n":2,"k":"3"})", "must be an integer");
  expect_bad(R"({"m":0,"n":2,"k":3})", "out of range");
  expect_bad(R"({"m":1,"n":2,"k":3,"layout":"TT"})", "unsupported layout");
  expect_bad(R"({"m":1,"n":2,"k":3,"acc":"f16"})", "unsupported accumulator");
  expect_bad(R"({"m":1,"n":2,"k":3,"epilog":"none"})", "unknown task field 'epilog'");
  expect_bad(R"({"op":"sgemm","m":1,"n":2,"k":3})", "unsupported op");
}

TEST(Task, ParsesShapes) {
  EXPECT_EQ(task_from_shape("1x4096x4096").shape(), "1x4096x4096");
  EXPECT_EQ(task_from_shape("8,16,32").shape(), "8x16x32");
  for (const char* bad : {"", "12", "1x2", "1x2x", "axbxc", "1x2x3x4", "1x2x-3"}) {
    EXPECT_THROW(task_from_shape(bad), Error) << bad;
  }
}

}  // namespace
}  // namespace tessera
