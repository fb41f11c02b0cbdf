// The service's default backend: the RL environment of env/ over the
// service's evaluator slots.
#include "serve/backend.hpp"

#include "tile/legality.hpp"

namespace tessera::serve {

namespace {
class EnvEpisode final : public Episode {
public:
  EnvEpisode(const env::EnvConfig& config, std::shared_ptr<EvaluatorPool> pool) : env_(config, std::move(pool)) {}

  env::ResetResult reset(std::optional<Task> task, std::uint64_t seed, const nlohmann::json& options) override {
    return env_.reset(std::move(task), seed, options);
  }
  env::StepResult step(const std::string& action) override { return env_.step(action); }
  bool done() const override { return env_.done(); }

  nlohmann::json summary() const override {
    nlohmann::json history = nlohmann::json::array();
    for (const auto& t : env_.history()) {
      history.push_back({{"turn", t.turn},
                         {"action_kind", t.action_kind},
                         {"status", t.result ? to_string(t.result->status) : std::string("format_error")},
                         {"reward", t.reward.scalar ? nlohmann::json(*t.reward.scalar) : nlohmann::json(nullptr)},
                         {"masked", t.reward.masked}});
    }
    const auto best = env_.best_speedup();
    return {{"task", to_json(env_.task())},
            {"turn", env_.turn()},
            {"done", env_.done()},
            {"best_speedup", best ? nlohmann::json(*best) : nlohmann::json(nullptr)},
            {"history", history}};
  }

private:
  env::Environment env_;
};
}  // namespace

Backend make_env_backend(std::shared_ptr<EvaluatorSlots> slots, env::EnvConfig config) {
  Backend b;
  b.config = config;
  auto pool = slots->pool();
  // Tile configs are checked against the GPU the service evaluates on (the
  // slots are started first, so the device is known).
  const tile::Limits limits = tile::with_device(tile::Limits{}, pool->evaluator(0).device());
  b.parse = [limits](const std::string& text, const Task& task, const env::ActionSpace& allowed) {
    return env::parse_action(text, std::nullopt, task, allowed, limits);
  };
  b.new_episode = [config, pool]() -> std::unique_ptr<Episode> { return std::make_unique<EnvEpisode>(config, pool); };
  b.slots = std::move(slots);
  return b;
}

}  // namespace tessera::serve
