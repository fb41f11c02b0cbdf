#pragma once
// What /metrics reports (docs/serve.md, "Metrics"): requests by endpoint and
// code, evaluations by status, latency histograms per stage, and gauges read
// at render time (queue depth, GPU busy fraction per GPU, ...).
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "serve/detail/metrics.hpp"
#include "serve/detail/record.hpp"

namespace tessera::serve::detail {

// The stages an evaluation's latency is split into. queue: waiting for a
// compile thread and an evaluator; compile: NVRTC/nvcc (ahead on the CPU pool
// and in the evaluator); verify and time: the worker's verification and
// timing phases; total: admission to answer.
inline const std::vector<std::string>& latency_stages() {
  static const std::vector<std::string> s = {"queue", "compile", "verify", "time", "total"};
  return s;
}

struct Gauges {
  double queue_depth = 0;  // admitted evaluations not yet running
  double queue_capacity = 0;
  double running = 0;
  double sessions = 0;
  double idempotency_entries = 0;
  bool draining = false;
  std::vector<double> busy_fraction;  // per evaluator slot (GPU)
  std::vector<double> busy_seconds;
  double replacements = 0;
};

class ServiceMetrics {
public:
  ServiceMetrics();
  void request(const std::string& endpoint, int code);
  void refused(const std::string& reason);  // overloaded | draining
  void replayed(const std::string& how);    // replayed | attached
  // A stateless evaluation's record (also each get_reward item).
  void record(const EvalRecord& rec);
  // A session step: its info carries the evaluation record, if there was one.
  void record_step(const nlohmann::json& info, double step_ms);
  std::string render(const Gauges& g) const;

  double evaluations(const std::string& status) const;

private:
  void observe_result(const nlohmann::json& result, double extra_compile_ms);
  void observe(const std::string& stage, double ms);

  LabelledCounter requests_, evaluations_, refused_, replays_;
  std::map<std::string, Histogram> stages_;
};

// The evaluation record inside a step's info, or null.
const nlohmann::json* step_result(const nlohmann::json& info);

}  // namespace tessera::serve::detail
