// The serve path of `tessera bench scale`: `tessera serve --gpus <the
// point's GPUs>` as a child, and `clients` threads posting the point's
// candidates to /v1/evaluate, as a trainer's rollout workers would.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <regex>
#include <sstream>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "bench/detail/gpu_sampler.hpp"
#include "bench/detail/http_client.hpp"
#include "bench/detail/scale_run.hpp"
#include "bench/detail/serve_child.hpp"
#include "bench/detail/stage_samples.hpp"
#include "core/error.hpp"
#include "harness/subprocess.hpp"

namespace tessera::bench::detail {

namespace {

constexpr double kRequestTimeoutSeconds = 3600;  // one evaluation, queue included: the service's own deadline is shorter
constexpr int kMaxRefusals = 600;                // 429s one request may meet (a second each) before it counts as failed
constexpr int kQueuePerClient = 4;               // --queue: never the reason for a 429
constexpr int kMinQueue = 256;                   // serve's default --queue
constexpr std::size_t kServeLogTailBytes = 1500;

struct Answer {
  nlohmann::json record;
  double client_ms = 0;
};

// The record of a request that got no evaluation record back.
nlohmann::json error_record(const std::string& type, const std::string& message) {
  return {{"error", {{"type", type}, {"message", message}}}};
}

Answer post_one(HttpClient& http, const std::string& body) {
  const auto t0 = std::chrono::steady_clock::now();
  HttpReply reply;
  for (int refusals = 0;; ++refusals) {
    reply = http.post_json("/v1/evaluate", body);
    if (reply.status != 429 || refusals >= kMaxRefusals) break;
    std::this_thread::sleep_for(std::chrono::duration<double>(std::max(0.05, reply.retry_after_s)));
  }
  Answer a;
  a.client_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  if (reply.status == 0) {
    a.record = error_record("transport", reply.error);
    return a;
  }
  a.record = nlohmann::json::parse(reply.body, nullptr, false);
  if (a.record.is_discarded() || !a.record.is_object())
    a.record = error_record("unreadable", fmt::format("HTTP {}: {}", reply.status, reply.body.substr(0, 300)));
  return a;
}

// Every candidate posted once, `clients` requests at a time; answers in
// candidate order. `each` runs after every answer (on a client's thread).
std::vector<Answer> post_all(const std::string& url, const std::vector<Candidate>& cands, const Task& task,
                             const nlohmann::json& options, int clients, const std::function<void()>& each) {
  std::vector<Answer> out(cands.size());
  std::atomic<std::size_t> next{0};
  std::vector<std::thread> threads;
  const int n = std::max(1, std::min<int>(clients, int(cands.size())));
  for (int c = 0; c < n; ++c) {
    threads.emplace_back([&] {
      HttpClient http(url, kRequestTimeoutSeconds);
      for (std::size_t i = next++; i < cands.size(); i = next++) {
        const nlohmann::json body = {{"task", task}, {"action", cands[i].source}, {"options", options}};
        out[i] = post_one(http, body.dump());
        if (each) each();
      }
    });
  }
  for (auto& t : threads) t.join();
  return out;
}

// tessera_gpu_busy_seconds_total per slot (the order of --gpus) from /metrics.
std::vector<double> busy_seconds(const std::string& url, std::size_t gpus) {
  HttpClient http(url, kRequestTimeoutSeconds);
  const HttpReply reply = http.get("/metrics");
  std::vector<double> out(gpus, -1);
  const std::regex line(R"re(^tessera_gpu_busy_seconds_total\{gpu="([0-9]+)"\} ([0-9.eE+-]+))re");
  std::istringstream in(reply.body);
  for (std::string text; std::getline(in, text);) {
    std::smatch m;
    if (!std::regex_search(text, m, line)) continue;
    const std::size_t slot = std::stoul(m[1]);
    if (slot < gpus) out[slot] = std::stod(m[2]);
  }
  return out;
}

std::string status_of(const nlohmann::json& record) {
  if (record.contains("status") && record["status"].is_string()) return record["status"];
  if (record.contains("error") && record["error"].is_object()) return "error:" + record["error"].value("type", "?");
  return "unknown";
}

ScalePoint measure(ScaleRun& run, const std::string& url, const std::vector<int>& devices, const Task& task) {
  const ScaleOptions& o = run.options;
  const std::string tag = fmt::format("serve-{}-g{}", task.shape(), devices.size());
  ScalePoint p = new_point("serve", task, devices);
  const nlohmann::json options = o.eval;

  // Twice as many warm-up requests as GPUs, all at once: a free evaluator
  // takes each, so every GPU's worker loads the task and its baselines.
  const auto warm = post_all(url, scale_candidates(run.base, tag + "-warmup", 2 * p.gpus), task, options,
                             2 * p.gpus, {});
  for (const auto& a : warm) {
    const std::string s = status_of(a.record);
    if (s != "ok" && s != "compiled") {
      p.note = fmt::format("a warm-up request was {}: {}", s, a.record.dump().substr(0, 300));
      break;
    }
  }
  const auto cands = scale_candidates(run.base, tag, o.per_gpu * p.gpus);
  nlohmann::json compile_only = options;
  compile_only["compile_only"] = true;  // compiled into the service's cache, nothing measured
  if (o.warm_cache) {
    (void)post_all(url, cands, task, compile_only, o.clients, {});
  } else {
    // The service's compile servers started (as many as the clients keep
    // compiling at once), outside the figures; then nothing compiled.
    (void)post_all(url, scale_candidates(run.base, tag + "-servers", o.clients), task, compile_only, o.clients, {});
    run.cache.clear_kernels();
  }

  const auto busy_before = busy_seconds(url, devices.size());
  GpuSampler sampler(devices, o.sample_period_s, o.nvml_library);
  note_nvml(run, sampler.problem());
  const auto t0 = std::chrono::steady_clock::now();
  const auto answers = post_all(url, cands, task, options, o.clients, [&] {
    run.progress.advance(fmt::format("serve {} on {} GPU(s)", p.shape, p.gpus));
  });
  p.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  p.gpu = sampler.finish();
  const auto busy_after = busy_seconds(url, devices.size());

  StageSamples stages;
  for (const auto& a : answers) {
    stages.add_record(a.record, a.client_ms);
    ++p.statuses[status_of(a.record)];
    if (a.record.contains("result") && a.record["result"].is_object() &&
        a.record["result"].value(nlohmann::json::json_pointer("/compile/cached"), false))
      ++p.compile_cache_hits;
  }
  p.evals = int(answers.size());
  p.evals_per_min = p.wall_s > 0 ? 60.0 * p.evals / p.wall_s : 0;
  p.stages = stages.figures();
  p.cold = stages.cold();
  for (std::size_t i = 0; i < p.gpu.size(); ++i)
    if (busy_before[i] >= 0 && busy_after[i] >= 0 && p.wall_s > 0)
      p.gpu[i].busy = (busy_after[i] - busy_before[i]) / p.wall_s;
  return p;
}

std::vector<std::string> server_args(const ScaleOptions& o, const std::vector<int>& devices) {
  nlohmann::json sandbox = o.sandbox;
  sandbox.erase("infra_retries");  // the service's judge retries (--env-config); its sandboxes do not
  sandbox.erase("device");
  sandbox.erase("mode");
  return {"serve", "--host", "127.0.0.1", "--port", "0", "--gpus", fmt::format("{}", fmt::join(devices, ",")),
          "--mode", to_string(o.sandbox.mode), "--sandbox-options", sandbox.dump(),
          "--queue", std::to_string(std::max(kMinQueue, kQueuePerClient * o.clients))};
}

}  // namespace

std::vector<ScalePoint> run_serve_points(ScaleRun& run, int gpus) {
  const ScaleOptions& o = run.options;
  const auto devices = devices_of(o, gpus);
  const auto binary = o.binary.empty() ? tessera_executable() : o.binary;
  ServeChild server(binary, server_args(o, devices), run.cache.dir() / fmt::format("serve-g{}.log", gpus),
                    kServeStartTimeoutSeconds);
  std::vector<ScalePoint> out;
  for (const auto& task : o.tasks) {
    out.push_back(measure(run, server.url(), devices, task));
    if (out.back().statuses.count("error:transport"))
      out.back().note += fmt::format("{}the server's last output:\n{}", out.back().note.empty() ? "" : "; ",
                                     server.log_tail(kServeLogTailBytes));
  }
  return out;
}

}  // namespace tessera::bench::detail
