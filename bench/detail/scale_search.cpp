// The search path of `tessera bench scale`: `tessera search --gpus <the
// point's GPUs> --proposers tile` as a child with a budget of the point's
// evaluations, its figures read back from the run's trajectories. The
// search has no warm-up: each worker's first evaluation loads the task and
// its baselines inside the figures (the stored autotunes keep that short),
// and its evaluations collect the fast counter set, as every search does.
#include <atomic>
#include <chrono>
#include <ctime>
#include <fstream>
#include <iomanip>
#include <sstream>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "bench/detail/gpu_sampler.hpp"
#include "bench/detail/scale_run.hpp"
#include "bench/detail/stage_samples.hpp"
#include "core/error.hpp"
#include "harness/subprocess.hpp"
#include "search/engine.hpp"
#include "core/json_read.hpp"

namespace tessera::bench::detail {

namespace {

constexpr double kSearchTimeoutSeconds = 4 * 3600;
constexpr std::size_t kSearchOutputLimit = 1 << 20;
constexpr auto kWatchInterval = std::chrono::milliseconds(500);

// Seconds since the epoch of "YYYY-MM-DDTHH:MM:SS.mmmZ" (utc_now_iso); nullopt when unreadable.
std::optional<double> seconds_of(const std::string& iso) {
  std::tm tm{};
  std::istringstream in(iso);
  in >> std::get_time(&tm, "%Y-%m-%dT%H:%M:%S");
  if (in.fail()) return std::nullopt;
  double frac = 0;
  if (in.peek() == '.') in >> frac;
  return double(::timegm(&tm)) + frac;
}

std::size_t lines_in(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::size_t n = 0;
  for (std::string line; std::getline(in, line);) n += !line.empty();
  return n;
}

// Advances the run's progress as the child's outcomes file grows.
class OutcomeWatcher {
public:
  OutcomeWatcher(ScaleRun& run, std::filesystem::path file, std::string what)
      : run_(run), file_(std::move(file)), what_(std::move(what)), thread_([this] { loop(); }) {}
  ~OutcomeWatcher() {
    stop_ = true;
    thread_.join();
  }
  OutcomeWatcher(const OutcomeWatcher&) = delete;
  OutcomeWatcher& operator=(const OutcomeWatcher&) = delete;

private:
  void loop() {
    std::size_t seen = 0;
    while (!stop_) {
      for (const std::size_t now = lines_in(file_); seen < now; ++seen) run_.progress.advance(what_);
      std::this_thread::sleep_for(kWatchInterval);
    }
  }
  ScaleRun& run_;
  std::filesystem::path file_;
  std::string what_;
  std::atomic<bool> stop_{false};
  std::thread thread_;  // declared last: started once the rest is set
};

ScalePoint measure(ScaleRun& run, const std::vector<int>& devices, const Task& task) {
  const ScaleOptions& o = run.options;
  ScalePoint p = new_point("search", task, devices);
  const auto dir = run.cache.dir() / fmt::format("search-{}-g{}", p.shape, p.gpus);
  nlohmann::json sandbox = o.sandbox;
  sandbox.erase("device");
  sandbox.erase("mode");
  const std::vector<std::string> args = {
      "search", "--proposers", "tile", "--gpus", fmt::format("{}", fmt::join(devices, ",")), "--budget-evals",
      std::to_string(o.per_gpu * p.gpus), "--task", nlohmann::json(task).dump(), "--out", dir.string(), "--quiet",
      "--mode", to_string(o.sandbox.mode), "--sandbox-options", sandbox.dump()};
  if (!o.warm_cache) run.cache.clear_kernels();  // a search's kernels are its own: nothing to compile ahead of it

  GpuSampler sampler(devices, o.sample_period_s, o.nvml_library);
  note_nvml(run, sampler.problem());
  ProcessResult child;
  {
    OutcomeWatcher watch(run, search::outcomes_path(dir), fmt::format("search {} on {} GPU(s)", p.shape, p.gpus));
    const auto binary = o.binary.empty() ? tessera_executable() : o.binary;
    child = run_process(binary, args, "", kSearchTimeoutSeconds, kSearchOutputLimit, run.cache.dir());
  }
  p.gpu = sampler.finish();
  if (child.exit_code != 0) {
    p.note = fmt::format("tessera search exited with {}{}: {}", child.exit_code, child.timed_out ? " (timed out)" : "",
                         child.output.substr(child.output.size() > 1500 ? child.output.size() - 1500 : 0));
  }

  StageSamples stages;
  std::optional<double> first, last;
  std::vector<double> busy_ms(devices.size(), 0.0);
  std::ifstream in(search::trajectories_path(dir));
  for (std::string line; std::getline(in, line);) {
    const auto rec = nlohmann::json::parse(line, nullptr, false);
    if (rec.is_discarded() || !rec.value("evaluated", false) || !rec.contains("eval") || !rec["eval"].is_object())
      continue;
    const auto r = rec["eval"].get<EvalResult>();
    stages.add_result(r);
    ++p.statuses[to_string(r.status)];
    if (r.compile.cached) ++p.compile_cache_hits;
    ++p.evals;
    const int e = int(integer_or(rec, "evaluator", -1));
    if (e >= 0 && std::size_t(e) < busy_ms.size()) busy_ms[e] += r.wall_ms;
    const auto ts = rec.value("timestamps", nlohmann::json::object());
    if (auto t = seconds_of(ts.value("planned", "")); t && (!first || *t < *first)) first = t;
    if (auto t = seconds_of(ts.value("evaluated", "")); t && (!last || *t > *last)) last = t;
  }
  // First step planned to last answer: the proposals and their compiles are
  // in, the child's start (workers up, the proposer's model loaded) is not.
  p.wall_s = first && last ? std::max(0.0, *last - *first) : 0;
  p.evals_per_min = p.wall_s > 0 ? 60.0 * p.evals / p.wall_s : 0;
  p.stages = stages.figures();
  p.cold = stages.cold();
  for (std::size_t i = 0; i < p.gpu.size() && i < busy_ms.size(); ++i)
    p.gpu[i].busy = p.wall_s > 0 ? busy_ms[i] / (1000 * p.wall_s) : -1;
  return p;
}

}  // namespace

std::vector<ScalePoint> run_search_points(ScaleRun& run, int gpus) {
  const auto devices = devices_of(run.options, gpus);
  std::vector<ScalePoint> out;
  for (const auto& task : run.options.tasks) out.push_back(measure(run, devices, task));
  return out;
}

}  // namespace tessera::bench::detail
