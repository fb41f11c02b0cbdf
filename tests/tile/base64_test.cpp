// The base64 that carries a cost model's trees in its JSON file: every length's
// padding, and bad text refused as bad input rather than decoded to garbage.
#include <gtest/gtest.h>

#include <string>

#include "core/error.hpp"
#include "tile/detail/base64.hpp"

namespace tessera::tile::detail {
namespace {

TEST(Base64, KnownTextsOfEveryPadding) {
  // RFC 4648, section 10.
  EXPECT_EQ(base64_encode(""), "");
  EXPECT_EQ(base64_encode("f"), "Zg==");
  EXPECT_EQ(base64_encode("fo"), "Zm8=");
  EXPECT_EQ(base64_encode("foo"), "Zm9v");
  EXPECT_EQ(base64_encode("foob"), "Zm9vYg==");
  EXPECT_EQ(base64_encode("fooba"), "Zm9vYmE=");
  EXPECT_EQ(base64_encode("foobar"), "Zm9vYmFy");
  EXPECT_EQ(base64_decode("Zm9vYmE="), "fooba");
}

TEST(Base64, EveryByteAndLengthRoundTrips) {
  std::string bytes;
  for (int i = 0; i < 300; ++i) {
    const std::string text = base64_encode(bytes);
    EXPECT_EQ(text.size() % 4, 0u);
    EXPECT_EQ(base64_decode(text), bytes) << "length " << bytes.size();
    bytes.push_back(char(i * 37 + 11));  // every byte value, zeros and high bits included
  }
}

TEST(Base64, BadTextIsBadInput) {
  EXPECT_THROW(base64_decode("Zm9"), Error) << "a length no encoder writes";
  EXPECT_THROW(base64_decode("Zm9*"), Error) << "a character outside the alphabet";
  EXPECT_THROW(base64_decode("Z=9v"), Error) << "padding inside the text";
}

}  // namespace
}  // namespace tessera::tile::detail
