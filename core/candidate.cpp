#include "core/candidate.hpp"

#include <regex>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/fs.hpp"

namespace tessera {

std::string to_string(CandidateKind k) {
  return k == CandidateKind::device_only ? "device_only" : "translation_unit";
}

CandidateKind detect_kind(const std::string& source) {
  static const std::regex tu_entry(R"(\btessera_launch\s*\()");
  static const std::regex dev_entry(R"(\btessera_hgemm\s*\()");
  const bool tu = std::regex_search(source, tu_entry);
  const bool dev = std::regex_search(source, dev_entry);
  if (tu) return CandidateKind::translation_unit;
  if (dev) return CandidateKind::device_only;
  fail_bad_input(
      "bad kernel ABI: the source defines neither tessera_hgemm (device-only) nor tessera_launch "
      "(translation unit); see docs/abi.md");
}

Candidate load_candidate(const std::filesystem::path& path, const std::string& kind) {
  Candidate c;
  c.source = read_file(path);
  c.name = path.filename().string();
  if (kind == "auto") c.kind = detect_kind(c.source);
  else if (kind == "device") c.kind = CandidateKind::device_only;
  else if (kind == "tu") c.kind = CandidateKind::translation_unit;
  else fail_bad_input(fmt::format("unknown candidate kind '{}' (auto, device, tu)", kind));
  return c;
}

}  // namespace tessera
