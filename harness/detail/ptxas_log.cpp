#include "harness/detail/ptxas_log.hpp"

#include <regex>
#include <sstream>

#include <fmt/format.h>

namespace tessera::detail {

Resources parse_ptxas_resources(const std::string& log, const std::string& entry) {
  Resources r;
  static const std::regex fn_re(R"(Function properties for (\S+))");
  static const std::regex frame_re(R"((\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads)");
  static const std::regex used_re(R"(Used (\d+) registers)");
  static const std::regex smem_re(R"((\d+) bytes smem)");
  std::istringstream in(log);
  std::string line;
  bool in_entry = false, seen_entry = false;
  while (std::getline(in, line)) {
    std::smatch m;
    if (std::regex_search(line, m, fn_re)) {
      in_entry = !seen_entry && (entry.empty() || m[1].str() == entry);
      seen_entry = seen_entry || in_entry;
      continue;
    }
    if (!in_entry) continue;
    if (std::regex_search(line, m, frame_re)) {
      r.local_bytes = std::stoi(m[1].str());
      r.spill_stores = std::stoi(m[2].str());
      r.spill_loads = std::stoi(m[3].str());
    }
    if (std::regex_search(line, m, used_re)) {
      r.registers = std::stoi(m[1].str());
      r.static_smem_bytes = std::regex_search(line, m, smem_re) ? std::stoi(m[1].str()) : 0;
      in_entry = false;  // "Used ..." closes the function's report
    }
  }
  return r;
}

std::string trim_log(const std::string& log, std::size_t limit) {
  if (log.size() <= limit) return log;
  const std::size_t head = limit / 2, tail = limit - head;
  return log.substr(0, head) + fmt::format("\n[... {} bytes cut ...]\n", log.size() - head - tail) +
         log.substr(log.size() - tail);
}

}  // namespace tessera::detail
