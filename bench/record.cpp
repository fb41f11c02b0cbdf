#include "bench/record.hpp"

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/json_read.hpp"

namespace tessera::bench {

namespace {

nlohmann::json detail_json(const BaselineDetail& d) {
  return {{"name", d.name}, {"verified", d.verified}, {"check_error", d.check_error}, {"hot", d.hot},
          {"counters", d.counters}};
}

BaselineDetail detail_from(const nlohmann::json& j) {
  BaselineDetail d;
  d.name = j.value("name", "");
  d.verified = j.value("verified", false);
  d.check_error = j.value("check_error", "");
  d.hot = j.value("hot", TimingStats{});
  d.counters = j.value("counters", nlohmann::json());
  return d;
}

bool measured(const TimingStats& s) { return s.status == "measured" && s.median_us > 0; }

}  // namespace

nlohmann::json to_json(const ShapeRecord& r) {
  nlohmann::json details = nlohmann::json::array();
  for (const auto& d : r.baseline_details) details.push_back(detail_json(d));
  nlohmann::json kernel = nullptr;
  if (r.kernel)
    kernel = {{"name", r.kernel->name}, {"file", r.kernel->file}, {"result", r.kernel->result}, {"tune", r.kernel->tune}};
  nlohmann::json j = {{"schema", kRecordSchema}, {"task", tessera::to_json(r.task)}, {"bucket", r.bucket},
                      {"baselines", r.baselines}, {"baseline_details", details}, {"kernel", kernel},
                      {"note", r.note}, {"device", r.device}, {"wall_s", r.wall_s}, {"finished_at", r.finished_at}};
  if (r.gpu >= 0) j["gpu"] = r.gpu;
  return j;
}

ShapeRecord record_from_json(const nlohmann::json& j) {
  try {
    if (j.value("schema", "") != kRecordSchema)
      fail_bad_input(fmt::format("not a bench record (schema '{}')", j.value("schema", "")));
    ShapeRecord r;
    r.task = parse_task(j.at("task"));
    r.bucket = j.at("bucket").get<std::string>();
    r.baselines = j.value("baselines", std::vector<BaselineResult>{});
    for (const auto& d : j.value("baseline_details", nlohmann::json::array())) r.baseline_details.push_back(detail_from(d));
    if (j.contains("kernel") && !j.at("kernel").is_null()) {
      const auto& k = j.at("kernel");
      r.kernel = KernelOutcome{k.value("name", ""), k.value("file", ""), k.at("result").get<EvalResult>(),
                               k.value("tune", nlohmann::json())};
    }
    r.note = j.value("note", "");
    r.device = j.value("device", DeviceSummary{});
    r.wall_s = j.value("wall_s", 0.0);
    r.gpu = integer_value<int>(j, "gpu", -1);
    r.finished_at = j.value("finished_at", "");
    return r;
  } catch (const nlohmann::json::exception& e) {
    fail_bad_input(std::string("malformed bench record: ") + e.what());
  }
}

std::optional<double> baseline_us(const ShapeRecord& r, const std::string& name) {
  for (const auto& b : r.baselines)
    if (b.name == name && b.error.empty() && measured(b.cold)) return b.cold.median_us;
  return std::nullopt;
}

std::optional<double> kernel_us(const ShapeRecord& r) {
  if (!r.kernel || r.kernel->result.status != Status::ok || !measured(r.kernel->result.cold)) return std::nullopt;
  return r.kernel->result.cold.median_us;
}

}  // namespace tessera::bench
