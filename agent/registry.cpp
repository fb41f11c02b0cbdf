#include "agent/registry.hpp"

#include <set>

#include <fmt/format.h>

#include "agent/proposers.hpp"
#include "core/error.hpp"

namespace tessera::agent {

namespace {

BuiltProposer build_tile(const ProposerOptions& o) {
  TileProposerOptions t;
  t.seed = o.seed;
  if (!o.arch.empty()) t.arch = o.arch;
  if (o.far_slower > 0) t.far_slower = o.far_slower;
  return {"tile", make_tile_proposer(t), {""}};
}

BuiltProposer build_llm(const ProposerOptions& o) {
  if (!o.llm || o.llm->endpoints.empty())
    fail_bad_input("the llm proposer needs an endpoint: give --config FILE (an endpoint or {\"endpoints\": [...]}), or "
                   "set TESSERA_LLM_BASE_URL and TESSERA_LLM_MODEL (docs/agent.md)");
  BuiltProposer b;
  b.name = "llm";
  // One model arm per ensemble member: a search chooses among them.
  b.models.clear();
  for (const auto& e : o.llm->endpoints) b.models.push_back(e.label());
  b.proposer = make_llm_proposer(*o.llm);
  return b;
}

BuiltProposer build_replay(const ProposerOptions& o) {
  if (o.replay.empty()) fail_bad_input("the replay proposer needs --replay PATH (a trajectories.jsonl)");
  return {"replay", make_replay_proposer(o.replay), {""}};
}

}  // namespace

std::string join_names(const std::vector<std::string>& names) { return fmt::format("{}", fmt::join(names, ", ")); }

void ProposerRegistry::add(std::string name, std::string summary, ProposerFactory factory) {
  if (name.empty() || !factory) throw Error("ProposerRegistry::add: a proposer needs a name and a factory");
  if (has(name)) throw Error("ProposerRegistry::add: '" + name + "' is registered twice");
  entries_.push_back({std::move(name), std::move(summary), std::move(factory)});
}

const ProposerRegistry::Entry* ProposerRegistry::find(const std::string& name) const {
  for (const auto& e : entries_)
    if (e.name == name) return &e;
  return nullptr;
}

bool ProposerRegistry::has(const std::string& name) const { return find(name) != nullptr; }

std::vector<std::string> ProposerRegistry::names() const {
  std::vector<std::string> out;
  for (const auto& e : entries_) out.push_back(e.name);
  return out;
}

std::string ProposerRegistry::summary(const std::string& name) const {
  const Entry* e = find(name);
  return e ? e->summary : std::string();
}

BuiltProposer ProposerRegistry::build(const std::string& name, const ProposerOptions& options) const {
  const Entry* e = find(name);
  if (e == nullptr) fail_bad_input(fmt::format("unknown proposer '{}' (known: {})", name, join_names(names())));
  BuiltProposer b = e->factory(options);
  b.name = name;
  if (!b.proposer) throw Error("proposer factory '" + name + "' built nothing");
  if (b.models.empty()) b.models = {""};
  return b;
}

std::vector<BuiltProposer> ProposerRegistry::build_all(const std::vector<std::string>& list,
                                                       const ProposerOptions& options) const {
  if (list.empty()) fail_bad_input(fmt::format("a search needs at least one proposer (known: {})", join_names(names())));
  std::set<std::string> seen;
  std::vector<BuiltProposer> out;
  for (const auto& n : list) {
    if (!seen.insert(n).second) fail_bad_input(fmt::format("proposer '{}' is listed twice", n));
    out.push_back(build(n, options));
  }
  return out;
}

const ProposerRegistry& ProposerRegistry::builtin() {
  static const ProposerRegistry registry = [] {
    ProposerRegistry r;
    r.add("tile", "mutates tile-compiler configs; no network", build_tile);
    r.add("llm", "asks LLM endpoints (one, or an ensemble whose members are model arms)", build_llm);
    r.add("replay", "serves the actions recorded in a trajectories.jsonl", build_replay);
    return r;
  }();
  return registry;
}

}  // namespace tessera::agent
