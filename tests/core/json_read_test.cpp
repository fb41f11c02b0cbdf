// integer_value: outside records give JSON integers in range or fail as bad
// input; a float (such as an integer too large for 64 bits, which the JSON
// parser reads as one) is never cast. The lenient readers fall back instead.
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

// The lenient readers of records on disk: a field absent, of another type, or
// in something that is not an object reads as the fallback, never throws.
TEST(LenientRead, FieldsOfAnotherTypeReadAsTheFallback) {
  const auto j = nlohmann::json::parse(
      R"({"n": 2.5, "i": 7, "u": 18446744073709551615, "f": 1e30, "b": true, "s": "ok", "z": null, "o": {"k": 1}})");
  EXPECT_DOUBLE_EQ(number_or(j, "n", 0), 2.5);
  EXPECT_DOUBLE_EQ(number_or(j, "s", -1), -1);
  EXPECT_EQ(integer_or(j, "i", 0), 7);
  EXPECT_EQ(integer_or(j, "u", -1), -1) << "past long long: the fallback, not a wrapped value";
  EXPECT_EQ(integer_or(j, "f", -1), -1) << "a float is never cast";
  EXPECT_EQ(integer_or(j, "n", -1), -1);
  EXPECT_TRUE(bool_or(j, "b", false));
  EXPECT_FALSE(bool_or(j, "i", false));
  EXPECT_EQ(string_or(j, "s", ""), "ok");
  EXPECT_EQ(string_or(j, "z", "none"), "none");
  EXPECT_EQ(string_or(j, "missing", "none"), "none");
  EXPECT_EQ(field_or_null(j, "o").at("k"), 1);
  EXPECT_TRUE(field_or_null(j.at("n"), "k").is_null()) << "a number has no fields";
  EXPECT_TRUE(field_or_null(nlohmann::json::array({1}), "k").is_null());
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
