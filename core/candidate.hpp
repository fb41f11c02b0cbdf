#pragma once
// A candidate kernel (docs/design.md §3, docs/abi.md).
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace tessera {

enum class CandidateKind {
  device_only,       // NVRTC, launched by the harness from its exported contract
  translation_unit,  // nvcc -> shared object exporting tessera_launch()
};
// "device_only" | "translation_unit": the names records and messages carry.
std::string to_string(CandidateKind k);
// The one reader of a kind's name: device_only (also "device") or
// translation_unit (also "tu"); bad_input naming the name otherwise.
CandidateKind parse_candidate_kind(std::string_view name);
// A kind as a caller names it (command lines, Python): nullopt for "auto"
// (to be detected from the source), any other name is parse_candidate_kind's.
std::optional<CandidateKind> parse_kind_choice(std::string_view name);
// parse_kind_choice's kind, or detect_kind(source) for "auto".
CandidateKind candidate_kind_for(std::string_view name, const std::string& source);
void to_json(nlohmann::json& j, CandidateKind k);
void from_json(const nlohmann::json& j, CandidateKind& k);  // bad_input for an unknown name

struct Candidate {
  CandidateKind kind = CandidateKind::device_only;
  std::string source;
  std::string name;  // for humans and logs; not part of the content hash
  nlohmann::json meta = nlohmann::json::object();  // e.g. {"tile_config": {...}}
};

// Decides the kind from the source: a TU exports tessera_launch, a
// device-only candidate exports tessera_hgemm + tessera_contract.
CandidateKind detect_kind(const std::string& source);

// Loads a .cu file; kind as candidate_kind_for takes it. Throws bad_input.
Candidate load_candidate(const std::filesystem::path& path, const std::string& kind = "auto");

}  // namespace tessera
