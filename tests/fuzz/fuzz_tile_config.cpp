// A tile config as a user or the tile proposer gives it: a JSON object (a
// mutation of the defaults) or a name. Only bad_input may come out; a parsed
// config's name parses back to the same config.
#include <cstdlib>

#include "tile/config.hpp"
#include "tests/fuzz/fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tessera::tile;
  const std::string text = tessera::fuzz::as_string(data, size);
  tessera::fuzz::expect_input_errors_only([&] {
    const Config c = parse_config(text);
    if (!(parse_name(name(c)) == c)) std::abort();
    if (!(from_json(to_json(c)) == c)) std::abort();
  });
  return 0;
}
