// An LLM's reply, as the proposers read it: code blocks, the kernel block, a
// whole reply as a diff or a full source (with and without a parent), and a
// tile-config mutation object. None of these may throw.
#include <fstream>
#include <iterator>

#include "agent/parse.hpp"
#include "tests/fuzz/fuzz_common.hpp"

namespace {

const std::string& parent_source() {
  static const std::string s = [] {
    std::ifstream in(std::string(TESSERA_SOURCE_DIR) + "/examples/hgemm_naive.cu");
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }();
  return s;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tessera::agent;
  const std::string reply = tessera::fuzz::as_string(data, size);
  (void)select_kernel_block(extract_code_blocks(reply));
  (void)parse_kernel_reply(reply, parent_source());
  (void)parse_kernel_reply(reply, std::nullopt);
  if (auto j = extract_json_object(reply)) (void)j->dump();
  return 0;
}
