#include "serve/detail/service_metrics.hpp"

#include <fmt/format.h>

namespace tessera::serve::detail {

namespace {
constexpr double kMsPerSecond = 1000.0;

// Type and help of the metrics read from the gauges at render time.
const std::map<std::string, std::pair<std::string, std::string>>& gauge_help() {
  static const std::map<std::string, std::pair<std::string, std::string>> h = {
      {"tessera_queue_depth", {"gauge", "Admitted evaluations waiting for a compile thread or an evaluator"}},
      {"tessera_queue_capacity", {"gauge", "Evaluations admitted at once before 429"}},
      {"tessera_running_evaluations", {"gauge", "Evaluations running on an evaluator now"}},
      {"tessera_worker_replacements_total", {"counter", "Evaluators replaced after dying"}},
      {"tessera_sessions", {"gauge", "Live sessions"}},
      {"tessera_idempotency_entries", {"gauge", "Idempotency keys remembered"}},
      {"tessera_draining", {"gauge", "1 while the service drains after SIGTERM"}},
      {"tessera_gpu_busy_fraction", {"gauge", "Share of the service's uptime each GPU spent evaluating"}},
      {"tessera_gpu_busy_seconds_total", {"counter", "Seconds each GPU spent evaluating"}},
  };
  return h;
}

double phase(const nlohmann::json& result, const char* name) {
  const auto& p = result.contains("phase_ms") ? result["phase_ms"] : nlohmann::json();
  return p.is_object() && p.contains(name) && p[name].is_number() ? p[name].get<double>() : -1;
}
}  // namespace

ServiceMetrics::ServiceMetrics() {
  for (const auto& s : latency_stages()) stages_.try_emplace(s);
}

void ServiceMetrics::request(const std::string& endpoint, int code) {
  requests_.add(label("endpoint", endpoint) + "," + label("code", std::to_string(code)));
}

void ServiceMetrics::refused(const std::string& reason) { refused_.add(label("reason", reason)); }
void ServiceMetrics::replayed(const std::string& how) { replays_.add(label("how", how)); }

double ServiceMetrics::evaluations(const std::string& status) const { return evaluations_.get(label("status", status)); }

void ServiceMetrics::observe(const std::string& stage, double ms) {
  if (ms >= 0) stages_.at(stage).observe(ms / kMsPerSecond);
}

void ServiceMetrics::observe_result(const nlohmann::json& result, double extra_compile_ms) {
  const double compile = phase(result, "compile");
  if (compile >= 0 || extra_compile_ms > 0) observe("compile", std::max(0.0, compile) + extra_compile_ms);
  observe("verify", phase(result, "verify"));
  observe("time", phase(result, "timing"));
}

void ServiceMetrics::record(const EvalRecord& rec) {
  evaluations_.add(label("status", rec.status()));
  if (rec.failed()) return;
  observe("total", rec.total_ms);
  if (!rec.result()) return;
  observe("queue", rec.queue_ms);
  observe_result(nlohmann::json(*rec.result()), rec.compile_ahead_ms);
}

const nlohmann::json* step_result(const nlohmann::json& info) {
  for (const char* key : {"result", "evaluation", "record"}) {
    if (info.contains(key) && info[key].is_object() && info[key].contains("status")) return &info[key];
  }
  return nullptr;
}

void ServiceMetrics::record_step(const nlohmann::json& info, double step_ms) {
  const nlohmann::json* r = info.is_object() ? step_result(info) : nullptr;
  evaluations_.add(label("status", r && (*r)["status"].is_string() ? (*r)["status"].get<std::string>() : "format_error"));
  observe("total", step_ms);
  if (!r) return;
  // The environment calls the pool itself: its wait is what the step took
  // beyond the evaluation's own wall time.
  if (r->contains("wall_ms") && (*r)["wall_ms"].is_number())
    observe("queue", std::max(0.0, step_ms - (*r)["wall_ms"].get<double>()));
  observe_result(*r, 0);
}

std::string ServiceMetrics::render(const Gauges& g) const {
  std::string out;
  describe_metric(out, "tessera_requests_total", "counter", "HTTP requests answered, by endpoint and status code");
  requests_.render(out, "tessera_requests_total");
  describe_metric(out, "tessera_evaluations_total", "counter",
                  "Evaluations finished, by status (format_error: the action was not a kernel)");
  evaluations_.render(out, "tessera_evaluations_total");
  describe_metric(out, "tessera_refused_total", "counter", "Requests refused: overloaded (429) or draining (503)");
  refused_.render(out, "tessera_refused_total");
  describe_metric(out, "tessera_idempotent_replays_total", "counter",
                  "Requests answered from an earlier request with the same Idempotency-Key");
  replays_.render(out, "tessera_idempotent_replays_total");
  describe_metric(out, "tessera_stage_seconds", "histogram", "Latency per stage of an evaluation");
  for (const auto& s : latency_stages()) stages_.at(s).render(out, "tessera_stage_seconds", label("stage", s));

  const double total = evaluations_.total();
  auto fraction = [&](const std::string& status) { return total > 0 ? evaluations(status) / total : 0.0; };
  describe_metric(out, "tessera_masked_fraction", "gauge", "Share of evaluations that were infra_error (masked)");
  sample(out, "tessera_masked_fraction", "", fraction("infra_error"));
  describe_metric(out, "tessera_rejected_fraction", "gauge", "Share of evaluations rejected for a policy violation");
  sample(out, "tessera_rejected_fraction", "", fraction("rejected"));

  const std::pair<const char*, double> totals[] = {{"tessera_queue_depth", g.queue_depth},
                                                  {"tessera_queue_capacity", g.queue_capacity},
                                                  {"tessera_running_evaluations", g.running},
                                                  {"tessera_worker_replacements_total", g.replacements},
                                                  {"tessera_sessions", g.sessions},
                                                  {"tessera_idempotency_entries", g.idempotency_entries},
                                                  {"tessera_draining", g.draining ? 1.0 : 0.0}};
  for (const auto& [name, value] : totals) {
    const auto& [type, help] = gauge_help().at(name);
    describe_metric(out, name, type, help);
    sample(out, name, "", value);
  }
  const std::pair<const char*, const std::vector<double>*> per_gpu[] = {
      {"tessera_gpu_busy_fraction", &g.busy_fraction}, {"tessera_gpu_busy_seconds_total", &g.busy_seconds}};
  for (const auto& [name, values] : per_gpu) {
    const auto& [type, help] = gauge_help().at(name);
    describe_metric(out, name, type, help);
    for (std::size_t i = 0; i < values->size(); ++i) sample(out, name, label("gpu", std::to_string(i)), (*values)[i]);
  }
  return out;
}

}  // namespace tessera::serve::detail
