#pragma once
// The proposers that can be built by name, each from the options it reads.
// `tessera search` builds its proposers here, and so can any other front end
// (the RL environment, a service), so a name means the same proposer
// everywhere. Unknown names are bad input that lists the known ones.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "agent/llm_proposer.hpp"
#include "agent/proposer.hpp"

namespace tessera::agent {

// Everything a built-in proposer may need; each reads its own part.
struct ProposerOptions {
  std::uint64_t seed = 0;                 // tile: its stream of mutations
  std::string arch;                       // tile: the GPU's architecture (sm_80 on Ampere); empty: its default
  double far_slower = 0;                  // tile: its far-slower bound (TileProposerOptions); 0: its default
  std::filesystem::path replay;           // replay: the trajectories.jsonl it serves
  std::optional<LlmProposerOptions> llm;  // llm: the endpoints (an ensemble) and their cache, budget, prices
};

struct BuiltProposer {
  std::string name;
  std::shared_ptr<Proposer> proposer;
  // The proposer's model arms: one per ensemble member for "llm", else {""}
  // (its only model). A search may choose among them.
  std::vector<std::string> models{""};
};

using ProposerFactory = std::function<BuiltProposer(const ProposerOptions&)>;

class ProposerRegistry {
public:
  // Throws for an empty or already registered name.
  void add(std::string name, std::string summary, ProposerFactory factory);
  bool has(const std::string& name) const;
  std::vector<std::string> names() const;     // in registration order
  std::string summary(const std::string& name) const;
  // bad_input for an unknown name (listing the known ones) or options the
  // proposer needs and did not get.
  BuiltProposer build(const std::string& name, const ProposerOptions& options) const;
  // Each name once; bad_input for an empty list or a name given twice.
  std::vector<BuiltProposer> build_all(const std::vector<std::string>& names, const ProposerOptions& options) const;

  // tile, llm, replay.
  static const ProposerRegistry& builtin();

private:
  struct Entry {
    std::string name, summary;
    ProposerFactory factory;
  };
  const Entry* find(const std::string& name) const;
  std::vector<Entry> entries_;
};

// "a, b, c": for messages.
std::string join_names(const std::vector<std::string>& names);

}  // namespace tessera::agent
