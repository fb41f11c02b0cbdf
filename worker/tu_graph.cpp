#include "worker/tu_graph.hpp"

#include "core/error.hpp"
#include "core/json_read.hpp"

namespace tessera::worker {

namespace {

// Generous bounds on what one call may enqueue: a malformed or hostile
// description must not make the worker allocate without limit.
constexpr std::size_t kMaxNodes = 4096;
constexpr std::size_t kMaxArgs = 256;
constexpr std::size_t kMaxArgBytes = 32768;  // the kernel parameter limit on Hopper
constexpr std::size_t kMaxNameBytes = 4096;

unsigned dim(const nlohmann::json& a, std::size_t i) {
  // integer_of: a float out of range would be undefined behaviour in get<>().
  const auto v = integer_of<long long>(a.at(i), "captured launch dimension");
  if (v < 0 || v > 0x7fffffffLL) fail_bad_input("captured launch dimension out of range");
  return static_cast<unsigned>(v);
}

std::array<unsigned, 3> dims(const nlohmann::json& j, const char* key) {
  const auto& a = j.at(key);
  if (!a.is_array() || a.size() != 3) fail_bad_input(std::string("captured ") + key + " needs three numbers");
  return {dim(a, 0), dim(a, 1), dim(a, 2)};
}

}  // namespace

std::string to_hex(const void* data, std::size_t bytes) {
  static const char* digits = "0123456789abcdef";
  const auto* p = static_cast<const unsigned char*>(data);
  std::string out(2 * bytes, '0');
  for (std::size_t i = 0; i < bytes; ++i) {
    out[2 * i] = digits[p[i] >> 4];
    out[2 * i + 1] = digits[p[i] & 15];
  }
  return out;
}

std::string from_hex(const std::string& hex) {
  if (hex.size() % 2) fail_bad_input("odd-length hex string");
  auto nibble = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    fail_bad_input("not a hex digit");
  };
  std::string out(hex.size() / 2, '\0');
  for (std::size_t i = 0; i < out.size(); ++i)
    out[i] = static_cast<char>(nibble(hex[2 * i]) * 16 + nibble(hex[2 * i + 1]));
  return out;
}

nlohmann::json to_json(const CapturedCall& call) {
  nlohmann::json nodes = nlohmann::json::array();
  for (const auto& n : call.nodes) {
    if (n.kind == CapturedNode::Kind::kernel) {
      nlohmann::json args = nlohmann::json::array();
      for (const auto& a : n.kernel.args) args.push_back(to_hex(a.data(), a.size()));
      nodes.push_back({{"kind", "kernel"},
                       {"name", n.kernel.name},
                       {"grid", n.kernel.grid},
                       {"block", n.kernel.block},
                       {"cluster", n.kernel.cluster},
                       {"shared_bytes", n.kernel.shared_bytes},
                       {"args", args}});
    } else {
      const auto& m = n.memset;
      nodes.push_back({{"kind", "memset"},
                       {"dst", m.dst},
                       {"value", m.value},
                       {"element_size", m.element_size},
                       {"width", m.width},
                       {"height", m.height},
                       {"pitch", m.pitch}});
    }
  }
  return {{"nodes", nodes}};
}

CapturedCall captured_call_from_json(const nlohmann::json& j) {
  try {
    CapturedCall call;
    const auto& nodes = j.at("nodes");
    if (!nodes.is_array() || nodes.size() > kMaxNodes) fail_bad_input("captured call: bad node list");
    for (const auto& jn : nodes) {
      CapturedNode n;
      const std::string kind = jn.at("kind").get<std::string>();
      if (kind == "kernel") {
        auto& k = n.kernel;
        k.name = jn.at("name").get<std::string>();
        if (k.name.empty() || k.name.size() > kMaxNameBytes) fail_bad_input("captured kernel: bad name");
        k.grid = dims(jn, "grid");
        k.block = dims(jn, "block");
        k.cluster = dims(jn, "cluster");
        k.shared_bytes = integer_of<unsigned>(jn.at("shared_bytes"), "captured kernel shared_bytes");
        const auto& args = jn.at("args");
        if (!args.is_array() || args.size() > kMaxArgs) fail_bad_input("captured kernel: bad argument list");
        std::size_t total = 0;
        for (const auto& a : args) {
          k.args.push_back(from_hex(a.get<std::string>()));
          total += k.args.back().size();
        }
        if (total > kMaxArgBytes) fail_bad_input("captured kernel: arguments larger than the hardware allows");
      } else if (kind == "memset") {
        n.kind = CapturedNode::Kind::memset;
        auto& m = n.memset;
        m.dst = integer_of<std::uint64_t>(jn.at("dst"), "captured memset dst");
        m.value = integer_of<unsigned>(jn.at("value"), "captured memset value");
        m.element_size = integer_of<unsigned>(jn.at("element_size"), "captured memset element_size");
        m.width = integer_of<std::uint64_t>(jn.at("width"), "captured memset width");
        m.height = integer_of<std::uint64_t>(jn.at("height"), "captured memset height");
        m.pitch = integer_of<std::uint64_t>(jn.at("pitch"), "captured memset pitch");
        if (m.element_size != 1 && m.element_size != 2 && m.element_size != 4)
          fail_bad_input("captured memset: element size must be 1, 2 or 4 bytes");
      } else {
        fail_bad_input("captured node of unknown kind '" + kind + "'");
      }
      call.nodes.push_back(std::move(n));
    }
    return call;
  } catch (const nlohmann::json::exception& e) {
    fail_bad_input(std::string("captured call: ") + e.what());
  }
}

}  // namespace tessera::worker
