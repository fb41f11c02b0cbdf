#include "agent/ensemble.hpp"

#include <random>

#include <fmt/format.h>

#include "core/error.hpp"

namespace tessera::agent {

void Ensemble::add(std::shared_ptr<LlmClient> client, double weight) {
  if (!client) throw Error("Ensemble::add: null client");
  if (weight < 0) fail_bad_input(fmt::format("ensemble weight of '{}' must be >= 0", client->config().label()));
  members_.push_back({std::move(client), weight});
}

std::shared_ptr<Ensemble> Ensemble::from_configs(const std::vector<EndpointConfig>& configs, const ClientOptions& options) {
  if (configs.empty()) fail_bad_input("an LLM ensemble needs at least one endpoint");
  auto e = std::make_shared<Ensemble>();
  for (const auto& c : configs) e->add(std::shared_ptr<LlmClient>(make_client(c, options)), c.weight);
  return e;
}

std::vector<std::string> Ensemble::names() const {
  std::vector<std::string> out;
  for (const auto& m : members_) out.push_back(m.client->config().label());
  return out;
}

LlmClient* Ensemble::find(const std::string& name) const {
  for (const auto& m : members_)
    if (m.client->config().label() == name) return m.client.get();
  for (const auto& m : members_)
    if (m.client->config().model == name) return m.client.get();
  return nullptr;
}

LlmClient& Ensemble::sample(std::uint64_t seed) const {
  if (members_.empty()) fail_bad_input("the LLM ensemble is empty");
  double total = 0;
  for (const auto& m : members_) total += m.weight;
  if (total <= 0) return *members_.front().client;
  std::mt19937_64 rng(seed);
  double x = std::uniform_real_distribution<double>(0.0, total)(rng);
  for (const auto& m : members_) {
    if (x < m.weight) return *m.client;
    x -= m.weight;
  }
  return *members_.back().client;
}

LlmClient& Ensemble::pick(const std::string& name, std::uint64_t seed) const {
  if (name.empty()) return sample(seed);
  if (LlmClient* c = find(name)) return *c;
  fail_bad_input(fmt::format("unknown model arm '{}' (ensemble has: {})", name, fmt::join(names(), ", ")));
}

}  // namespace tessera::agent
