#pragma once
// What a translation unit's host code enqueues for one call, as captured by
// the runner (runner_main.cpp) and replayed by the worker (tu_replay.cpp):
// the kernels, with their launch geometry and argument bytes, and memsets, in
// an order that respects the captured graph's dependencies. It crosses the
// process boundary as JSON; the worker checks it before it launches anything.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace tessera::worker {

struct CapturedKernel {
  std::string name;  // mangled, as in the module
  std::array<unsigned, 3> grid{1, 1, 1}, block{1, 1, 1}, cluster{0, 0, 0};
  unsigned shared_bytes = 0;
  std::vector<std::string> args;  // each argument's bytes, in order
};

struct CapturedMemset {
  std::uint64_t dst = 0;
  unsigned value = 0;
  unsigned element_size = 1;  // 1, 2 or 4 bytes
  std::uint64_t width = 0;    // elements per row
  std::uint64_t height = 1;
  std::uint64_t pitch = 0;    // bytes between rows
};

struct CapturedNode {
  enum class Kind { kernel, memset } kind = Kind::kernel;
  CapturedKernel kernel;
  CapturedMemset memset;
};

struct CapturedCall {
  std::vector<CapturedNode> nodes;
};

nlohmann::json to_json(const CapturedCall& call);
// Throws tessera::Error(bad_input) on a malformed description: the runner
// runs candidate host code, so what it sends is untrusted.
CapturedCall captured_call_from_json(const nlohmann::json& j);

// Hex of raw bytes and back (argument bytes and the params block on the wire).
std::string to_hex(const void* data, std::size_t bytes);
std::string from_hex(const std::string& hex);  // throws bad_input

}  // namespace tessera::worker
