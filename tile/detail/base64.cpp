#include "tile/detail/base64.hpp"

#include <boost/archive/iterators/base64_from_binary.hpp>
#include <boost/archive/iterators/binary_from_base64.hpp>
#include <boost/archive/iterators/dataflow_exception.hpp>
#include <boost/archive/iterators/transform_width.hpp>

#include "core/error.hpp"

namespace tessera::tile::detail {

namespace it = boost::archive::iterators;

std::string base64_encode(std::string_view bytes) {
  using Encode = it::base64_from_binary<it::transform_width<std::string_view::const_iterator, 6, 8>>;
  std::string text(Encode(bytes.begin()), Encode(bytes.end()));
  text.append((3 - bytes.size() % 3) % 3, '=');  // the iterators write no padding
  return text;
}

std::string base64_decode(std::string_view text) {
  if (text.size() % 4 != 0) fail_bad_input("base64 text of a length no encoder writes (not a multiple of 4)");
  std::size_t pad = 0;
  while (pad < 2 && pad < text.size() && text[text.size() - 1 - pad] == '=') ++pad;
  const std::string_view body = text.substr(0, text.size() - pad);
  // Boost's table reads '=' as zero bits; only the end may have it.
  if (body.find('=') != std::string_view::npos) fail_bad_input("base64 text with padding before its end");
  using Decode = it::transform_width<it::binary_from_base64<std::string_view::const_iterator>, 8, 6>;
  try {
    std::string bytes(Decode(body.begin()), Decode(body.end()));
    // The last group's spare bits can make one byte too many; the length says how many there are.
    bytes.resize(body.size() * 6 / 8);
    return bytes;
  } catch (const it::dataflow_exception&) {
    fail_bad_input("base64 text with a character outside its alphabet");
  }
}

}  // namespace tessera::tile::detail
