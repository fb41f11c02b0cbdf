#pragma once
// What an evaluation is worth to a learner: the one reward function that the
// search loops and the RL environment share (docs/reward.md).
//
// Gates first (the action parsed into a kernel, the kernel compiled, it was
// correct), then a performance term from the measured speedup, clipped.
// Every failure class has its own penalty. A failure of the machine or of
// tessera (`infra_error`) is masked: no scalar at all, so a trainer drops the
// sample instead of teaching the policy that it did something wrong.
#include <map>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "core/result.hpp"

namespace tessera {

enum class RewardShape {
  log,     // ln(speedup): symmetric in "twice as fast" / "twice as slow"
  linear,  // speedup - 1: KernelGYM-style, plain relative gain
};
std::string to_string(RewardShape s);
RewardShape parse_reward_shape(const std::string& s);  // throws bad_input

// The defaults of the RL environment (the search has its own, below).
inline constexpr double kDefaultFormatPenalty = -1.0;     // the action is not a kernel at all
inline constexpr double kDefaultCheatPenalty = -1.0;      // `rejected`: a policy violation
inline constexpr double kDefaultCompilePenalty = -0.6;    // compile_error
inline constexpr double kDefaultCrashPenalty = -0.5;      // launch_error, runtime_fault, timeout
inline constexpr double kDefaultWrongPenalty = -0.3;      // wrong_answer: compiled and ran, result wrong
inline constexpr double kDefaultCorrectBonus = 1.0;       // a verified kernel, before its speed counts: above ln 3 - 0.3, so any correct kernel outscores any failure
inline constexpr double kDefaultPerformanceClip = 1.0986122886681098;  // ln 3: a 3x win earns no more than 3x

struct RewardConfig {
  RewardShape shape = RewardShape::log;
  // The performance term is clipped to [-clip, +clip].
  double clip = kDefaultPerformanceClip;
  double performance_weight = 1.0;
  // Added to a correct, timed kernel (the "correct" gate).
  double correct_bonus = kDefaultCorrectBonus;
  // Scalar of a kernel that compiled but could not be verified (compile-only
  // mode, no GPU): it passed the format and compile gates, nothing more.
  double compiled_reward = 0.0;
  // Penalty per failure class: "format", "duplicate", and every failing
  // Status name (compile_error, launch_error, runtime_fault, timeout,
  // wrong_answer, rejected). A class without an entry scores 0.
  std::map<std::string, double> penalty;

  nlohmann::json to_json() const;
  // Unknown keys are a bad_input error; missing keys keep their defaults.
  static RewardConfig from_json(const nlohmann::json& j);
};

// The RL environment's default: log speedup against the best cuBLAS/cuBLASLt
// baseline, clipped at 3x either way, a bonus for correctness, and penalties
// ordered by how far the kernel got.
RewardConfig default_reward_config();

// What is being paid for. `reference_us` is the time the kernel is compared
// with: 0 means the best baseline measured in the same run (the result's own
// speedup); a search passes its parent's cold median instead.
struct RewardInput {
  const EvalResult* result = nullptr;  // null when the action produced no kernel
  bool format_ok = true;               // false: the action could not be parsed into a kernel
  bool duplicate = false;              // the kernel was evaluated before; not evaluated again
  bool use_reference = false;          // compare with reference_us instead of the baseline
  double reference_us = 0;             // with use_reference: 0 = no reference (performance term 0)
  std::string format_error;            // why the action was not a kernel
};

struct Reward {
  std::optional<double> scalar;  // nullopt when masked
  bool masked = false;
  // gate flags, speedup, performance term, penalty/bonus, class, scalar:
  // documented field by field in docs/reward.md.
  nlohmann::json components = nlohmann::json::object();
};

// The failure class a result falls in ("ok", "compiled", "format",
// "duplicate", or its Status name).
std::string reward_class(const RewardInput& in);

Reward compute_reward(const RewardInput& in, const RewardConfig& config);

}  // namespace tessera
