#pragma once
// One finished shape of a bench suite: a line of runs/<id>/results.jsonl
// (docs/bench.md). Written once, when the shape is done, and never rewritten.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/result.hpp"
#include "core/task.hpp"

namespace tessera::bench {

inline constexpr const char* kRecordSchema = "tessera.bench_shape/1";

// The kernel measured on a shape. Its result holds the baselines, timed in the
// same worker, interleaved with it.
struct KernelOutcome {
  std::string name;         // candidate or tile config name
  std::string file;         // the kernel file, when it came from one
  EvalResult result;
  nlohmann::json tune = nullptr;  // tile-tuned: plan, configs evaluated, failures, the sweep's fastest
};

// What the suite measured in its own process for baselines-only sweeps, per
// baseline: the hot time and counters when asked, the output check.
struct BaselineDetail {
  std::string name;
  bool verified = false;
  std::string check_error;
  TimingStats hot;
  nlohmann::json counters = nullptr;
};

struct ShapeRecord {
  Task task;
  std::string bucket;
  std::vector<BaselineResult> baselines;  // cold; with a kernel: those of its result
  std::vector<BaselineDetail> baseline_details;  // baselines-only sweeps
  std::optional<KernelOutcome> kernel;
  std::string note;  // why a shape has no kernel, or what went wrong around it
  DeviceSummary device;
  int gpu = -1;  // the CUDA ordinal it was measured on, when a sweep spread shapes over GPUs (--gpus)
  double wall_s = 0;  // wall time this shape took in the sweep (compile, tune, measure)
  std::string finished_at;
};

nlohmann::json to_json(const ShapeRecord& r);
ShapeRecord record_from_json(const nlohmann::json& j);  // throws bad_input on a malformed record

// The cold median of a baseline that ran and was measured; nullopt otherwise.
std::optional<double> baseline_us(const ShapeRecord& r, const std::string& name);
// The kernel's cold median when it verified and was timed.
std::optional<double> kernel_us(const ShapeRecord& r);

}  // namespace tessera::bench
