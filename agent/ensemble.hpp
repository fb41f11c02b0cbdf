#pragma once
// Several models at once, each with a weight. The caller (the bandit) picks
// one per call by name, or samples one by weight.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "agent/client.hpp"

namespace tessera::agent {

class Ensemble {
public:
  void add(std::shared_ptr<LlmClient> client, double weight);
  // One client per config (weights from EndpointConfig::weight), all sharing
  // options' cache, ledger and budget.
  static std::shared_ptr<Ensemble> from_configs(const std::vector<EndpointConfig>& configs, const ClientOptions& options);

  std::size_t size() const { return members_.size(); }
  std::vector<std::string> names() const;  // EndpointConfig::label() of each
  // By label, else by model name; nullptr when absent.
  LlmClient* find(const std::string& name) const;
  // Weighted draw, deterministic in `seed`.
  LlmClient& sample(std::uint64_t seed) const;
  // `name` empty: sample(seed); unknown name: bad_input.
  LlmClient& pick(const std::string& name, std::uint64_t seed) const;

private:
  struct Member {
    std::shared_ptr<LlmClient> client;
    double weight;
  };
  std::vector<Member> members_;
};

}  // namespace tessera::agent
