#include "core/reward.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"

namespace tessera {

std::string to_string(RewardShape s) { return s == RewardShape::log ? "log" : "linear"; }

RewardShape parse_reward_shape(const std::string& s) {
  if (s == "log") return RewardShape::log;
  if (s == "linear") return RewardShape::linear;
  fail_bad_input("unknown reward shape '" + s + "' (log, linear)");
}

RewardConfig default_reward_config() {
  RewardConfig c;
  c.penalty = {{"format", kDefaultFormatPenalty},       {"duplicate", 0.0},
               {"compile_error", kDefaultCompilePenalty}, {"launch_error", kDefaultCrashPenalty},
               {"runtime_fault", kDefaultCrashPenalty},   {"timeout", kDefaultCrashPenalty},
               {"wrong_answer", kDefaultWrongPenalty},    {"rejected", kDefaultCheatPenalty}};
  return c;
}

nlohmann::json RewardConfig::to_json() const {
  return {{"shape", to_string(shape)},
          {"clip", clip},
          {"performance_weight", performance_weight},
          {"correct_bonus", correct_bonus},
          {"compiled_reward", compiled_reward},
          {"penalty", penalty}};
}

RewardConfig RewardConfig::from_json(const nlohmann::json& j) {
  if (!j.is_object()) fail_bad_input("a reward configuration is a JSON object");
  RewardConfig c = default_reward_config();
  for (const auto& item : j.items()) {
    // Named, not structured bindings: lambdas may not capture those before C++20 compilers caught up (clang 14).
    const std::string& key = item.key();
    const nlohmann::json& v = item.value();
    auto number = [&]() {
      if (!v.is_number()) fail_bad_input("reward." + key + " must be a number");
      return v.get<double>();
    };
    if (key == "shape") {
      if (!v.is_string()) fail_bad_input("reward.shape must be \"log\" or \"linear\"");
      c.shape = parse_reward_shape(v.get<std::string>());
    } else if (key == "clip") {
      c.clip = number();
      if (!(c.clip > 0)) fail_bad_input("reward.clip must be positive");
    } else if (key == "performance_weight") {
      c.performance_weight = number();
    } else if (key == "correct_bonus") {
      c.correct_bonus = number();
    } else if (key == "compiled_reward") {
      c.compiled_reward = number();
    } else if (key == "penalty") {
      if (!v.is_object()) fail_bad_input("reward.penalty maps a failure class to a number");
      for (const auto& [cls, p] : v.items()) {
        if (!p.is_number()) fail_bad_input("reward.penalty." + cls + " must be a number");
        c.penalty[cls] = p.get<double>();
      }
    } else {
      fail_bad_input("unknown reward setting '" + key +
                     "' (shape, clip, performance_weight, correct_bonus, compiled_reward, penalty)");
    }
  }
  return c;
}

namespace {

bool timed(const EvalResult& r) { return r.status == Status::ok && r.cold.median_us > 0; }

// The worker got as far as loading the compiled kernel.
bool reached_load(const EvalResult& r) {
  switch (r.status) {
    case Status::ok:
    case Status::compiled:
    case Status::wrong_answer:
    case Status::launch_error:
    case Status::runtime_fault: return true;
    default: return r.phase_ms.count("load") > 0;
  }
}

// Speedup of the kernel over what it is compared with; 0 when there is nothing to compare.
double speedup_of(const RewardInput& in) {
  const EvalResult& r = *in.result;
  if (!timed(r)) return 0;
  if (!in.use_reference) return r.speedup;
  return in.reference_us > 0 ? in.reference_us / r.cold.median_us : 0;
}

double performance_term(double speedup, const RewardConfig& c) {
  if (speedup <= 0) return 0;
  const double raw = c.shape == RewardShape::log ? std::log(speedup) : speedup - 1.0;
  return std::clamp(raw, -c.clip, c.clip);
}

double penalty_for(const std::string& cls, const RewardConfig& c) {
  auto it = c.penalty.find(cls);
  return it == c.penalty.end() ? 0.0 : it->second;
}

}  // namespace

std::string reward_class(const RewardInput& in) {
  if (!in.format_ok) return "format";
  if (in.duplicate) return "duplicate";
  if (!in.result) return "no_proposal";
  return to_string(in.result->status);
}

Reward compute_reward(const RewardInput& in, const RewardConfig& c) {
  Reward out;
  const std::string cls = reward_class(in);
  const EvalResult* r = in.format_ok && !in.duplicate ? in.result : nullptr;
  auto& k = out.components;
  k["class"] = cls;
  k["format"] = in.format_ok;
  k["compiled"] = r != nullptr && reached_load(*r);
  k["correct"] = r != nullptr && r->status == Status::ok;
  k["timed"] = r != nullptr && timed(*r);
  // The evaluation's status in the words of every record (docs/result-schema.md,
  // the service's records): "format_error" when the action was not a kernel.
  k["status"] = r ? to_string(r->status) : (cls == "format" ? std::string("format_error") : cls);
  k["reference"] = in.use_reference ? "given" : "baseline";
  k["reference_us"] = in.use_reference ? in.reference_us : (r ? r->best_baseline_us : 0.0);
  k["shape"] = to_string(c.shape);
  if (!in.format_error.empty()) k["format_error"] = in.format_error;

  double scalar = 0, perf = 0, bonus = 0, penalty = 0;
  nlohmann::json speedup = nullptr;
  if (r && r->status == Status::infra_error) {
    out.masked = true;
  } else if (r && r->status == Status::ok) {
    const double s = speedup_of(in);
    if (s > 0) speedup = s;
    perf = c.performance_weight * performance_term(s, c);
    bonus = c.correct_bonus;
    scalar = bonus + perf;
  } else if (r && r->status == Status::compiled) {
    bonus = c.compiled_reward;
    scalar = bonus;
  } else {
    penalty = penalty_for(cls, c);
    scalar = penalty;
  }
  k["masked"] = out.masked;
  k["speedup"] = speedup;
  k["performance"] = perf;
  k["bonus"] = bonus;
  k["penalty"] = penalty;
  if (out.masked) {
    k["scalar"] = nullptr;
  } else {
    out.scalar = scalar;
    k["scalar"] = scalar;
  }
  return out;
}

}  // namespace tessera
