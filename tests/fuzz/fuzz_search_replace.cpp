// SEARCH/REPLACE blocks applied to a parent source, both from the input
// (parent, a NUL byte, then the reply): the applier's matching, fuzzy
// re-indentation and bookkeeping on any text. Never throws; an applied diff
// contains each block's replacement.
#include <cstdlib>

#include "agent/parse.hpp"
#include "tests/fuzz/fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tessera::agent;
  const auto [parent, reply] = tessera::fuzz::split_once(tessera::fuzz::as_string(data, size), std::string_view("\0", 1));
  const auto blocks = extract_diff_blocks(reply);
  const ApplyResult r = apply_diff(parent, blocks);
  if (r.ok && r.fuzzy_matches == 0) {
    // An exact application puts every non-empty replacement into the result.
    for (const auto& b : blocks)
      if (!b.replace.empty() && r.source.find(b.replace) == std::string::npos) std::abort();
  }
  return 0;
}
