#include "serve/evaluator_slots.hpp"

#include <algorithm>

#include "core/error.hpp"
#include "env/judge.hpp"
#include "serve/detail/replaceable_evaluator.hpp"

namespace tessera::serve {

EvaluatorSlots::EvaluatorSlots(const std::vector<EvaluatorFactory>& factories)
    : started_(std::chrono::steady_clock::now()) {
  if (factories.empty()) fail_bad_input("the service needs at least one evaluator");
  std::vector<std::unique_ptr<Evaluator>> evs;
  for (const auto& f : factories) {
    stats_.push_back(std::make_shared<detail::SlotStats>());
    auto ev = std::make_unique<detail::ReplaceableEvaluator>(f, stats_.back());
    evaluators_.push_back(ev.get());
    evs.push_back(std::move(ev));
  }
  pool_ = std::make_shared<EvaluatorPool>(std::move(evs));
}

EvaluatorSlots::~EvaluatorSlots() = default;

void EvaluatorSlots::kill(std::size_t index) {
  if (index >= evaluators_.size())
    fail_bad_input("no worker " + std::to_string(index) + " (the service has " + std::to_string(size()) + ")");
  evaluators_[index]->kill();
}

double EvaluatorSlots::busy_seconds(std::size_t index) const {
  const auto& s = *stats_.at(index);
  long long ns = s.busy_ns;
  const long long since = s.busy_since_ns;
  if (since > 0) ns += detail::steady_ns() - since;  // the evaluation running now counts so far
  return double(ns) * 1e-9;
}

double EvaluatorSlots::busy_fraction(std::size_t index) const {
  const double up = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
  return up > 0 ? std::min(1.0, busy_seconds(index) / up) : 0.0;
}

long long EvaluatorSlots::replacements() const {
  long long n = 0;
  for (const auto& s : stats_) n += s->replacements;
  return n;
}

std::size_t EvaluatorSlots::running() const {
  std::size_t n = 0;
  for (const auto& s : stats_) n += s->busy_since_ns > 0 ? 1 : 0;
  return n;
}

std::vector<int> parse_gpu_list(const std::string& spec, int available) {
  std::vector<int> out;
  if (spec == "all") {
    for (int d = 0; d < std::max(1, available); ++d) out.push_back(d);
    return out;
  }
  std::size_t at = 0;
  while (at <= spec.size()) {
    const auto comma = std::min(spec.find(',', at), spec.size());
    const std::string part = spec.substr(at, comma - at);
    std::size_t used = 0;
    int d = -1;
    try {
      d = std::stoi(part, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (part.empty() || used != part.size() || d < 0)
      fail_bad_input("--gpus takes 'all' or device ordinals like 0,1 (got '" + spec + "')");
    if (available > 0 && d >= available)
      fail_bad_input("--gpus " + spec + ": this machine has " + std::to_string(available) + " GPUs");
    out.push_back(d);
    at = comma + 1;
  }
  return out;
}

std::vector<EvaluatorFactory> sandbox_factories(const SandboxOptions& base, const std::vector<int>& devices) {
  if (devices.empty()) fail_bad_input("the service needs at least one device");
  std::vector<EvaluatorFactory> out;
  for (int d : devices) {
    out.push_back([base = env::judging_sandbox(base), d] {
      SandboxOptions o = base;
      o.device = d;
      return make_evaluator(o);
    });
  }
  return out;
}

}  // namespace tessera::serve
