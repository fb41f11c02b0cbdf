#include "core/candidate.hpp"

#include <regex>

#include "core/error.hpp"
#include "core/fs.hpp"
#include "core/wire_enum.hpp"

namespace tessera {

namespace {

// The first name of each kind is the one written.
constexpr EnumName<CandidateKind> kKindNames[] = {{CandidateKind::device_only, "device_only"},
                                                  {CandidateKind::translation_unit, "translation_unit"},
                                                  {CandidateKind::device_only, "device"},
                                                  {CandidateKind::translation_unit, "tu"}};

// A caller's choice: a kind, or "auto".
enum class KindChoice { detect, device_only, translation_unit };
constexpr EnumName<KindChoice> kChoiceNames[] = {{KindChoice::detect, "auto"},
                                                 {KindChoice::device_only, "device_only"},
                                                 {KindChoice::translation_unit, "translation_unit"},
                                                 {KindChoice::device_only, "device"},
                                                 {KindChoice::translation_unit, "tu"}};

}  // namespace

std::string to_string(CandidateKind k) { return name_of(k, kKindNames); }

CandidateKind parse_candidate_kind(std::string_view name) { return parse_enum(name, kKindNames, "candidate kind"); }

std::optional<CandidateKind> parse_kind_choice(std::string_view name) {
  switch (parse_enum(name, kChoiceNames, "candidate kind")) {
    case KindChoice::device_only: return CandidateKind::device_only;
    case KindChoice::translation_unit: return CandidateKind::translation_unit;
    case KindChoice::detect: break;
  }
  return std::nullopt;
}

CandidateKind candidate_kind_for(std::string_view name, const std::string& source) {
  const auto kind = parse_kind_choice(name);
  return kind ? *kind : detect_kind(source);
}

void to_json(nlohmann::json& j, CandidateKind k) { j = to_string(k); }

void from_json(const nlohmann::json& j, CandidateKind& k) { k = parse_enum_json(j, kKindNames, "candidate kind"); }

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
  c.kind = candidate_kind_for(kind, c.source);
  return c;
}

}  // namespace tessera
