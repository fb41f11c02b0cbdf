#pragma once
// A candidate kernel (docs/design.md §3, docs/abi.md).
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

namespace tessera {

enum class CandidateKind {
  device_only,       // NVRTC, launched by the harness from its exported contract
  translation_unit,  // nvcc -> shared object exporting tessera_launch()
};
std::string to_string(CandidateKind k);

struct Candidate {
  CandidateKind kind = CandidateKind::device_only;
  std::string source;
  std::string name;  // for humans and logs; not part of the content hash
  nlohmann::json meta = nlohmann::json::object();  // e.g. {"tile_config": {...}}
};

// Decides the kind from the source: a TU exports tessera_launch, a
// device-only candidate exports tessera_hgemm + tessera_contract.
CandidateKind detect_kind(const std::string& source);

// Loads a .cu file; kind "auto", "device" or "tu". Throws bad_input.
Candidate load_candidate(const std::filesystem::path& path, const std::string& kind = "auto");

}  // namespace tessera
