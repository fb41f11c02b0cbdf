// integer_value: outside records give JSON integers in range or fail as bad
// input; a float (such as an integer too large for 64 bits, which the JSON
// parser reads as one) is never cast.
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>

#include "core/json_read.hpp"
#include "core/result.hpp"

namespace tessera {
namespace {

bool is_bad_input(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.kind() == Error::Kind::bad_input;
  }
  return false;
}

TEST(IntegerValue, IntegersInRangeAndTheFallback) {
  const auto j = nlohmann::json::parse(R"({"a": 7, "b": -3, "big": 18446744073709551615})");
  EXPECT_EQ(integer_value<int>(j, "a", 0), 7);
  EXPECT_EQ(integer_value<long long>(j, "b", 0), -3);
  EXPECT_EQ(integer_value<std::uint64_t>(j, "big", 0), UINT64_MAX);
  EXPECT_EQ(integer_value<int>(j, "missing", -1), -1);
}

TEST(IntegerValue, FloatsAndOutOfRangeValuesAreBadInput) {
  // 33154283915351731717 does not fit 64 bits: the parser makes it a float.
  const auto j = nlohmann::json::parse(
      R"({"seed": 33154283915351731717, "half": 1.5, "neg": -1, "wide": 4294967296, "text": "7", "none": null})");
  ASSERT_TRUE(j.at("seed").is_number_float());
  EXPECT_TRUE(is_bad_input([&] { (void)integer_value<std::uint64_t>(j, "seed", 0); }));
  EXPECT_TRUE(is_bad_input([&] { (void)integer_value<long long>(j, "half", 0); }));
  EXPECT_TRUE(is_bad_input([&] { (void)integer_value<std::uint64_t>(j, "neg", 0); }));
  EXPECT_TRUE(is_bad_input([&] { (void)integer_value<int>(j, "wide", 0); }));
  EXPECT_TRUE(is_bad_input([&] { (void)integer_value<int>(j, "text", 0); }));
  EXPECT_TRUE(is_bad_input([&] { (void)integer_value<int>(j, "none", 0); })) << "null was never an integer";
}

TEST(IntegerValue, RecordStructsReadTheirIntegersTheSameWay) {
  // Resources' registers is an int; the run-log fuzzer reached this cast through a step record.
  EXPECT_EQ(nlohmann::json::parse(R"({"registers": 96})").get<Resources>().registers, 96);
  EXPECT_TRUE(is_bad_input([] { (void)nlohmann::json::parse(R"({"registers": 1.8e20})").get<Resources>(); }));
  EXPECT_TRUE(is_bad_input([] { (void)nlohmann::json::parse(R"({"status": "ok", "attempts": 2.5})").get<EvalResult>(); }));
}

}  // namespace
}  // namespace tessera
