#include "bench/scale.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <system_error>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "bench/detail/scale_run.hpp"
#include "core/error.hpp"
#include "core/fs.hpp"
#include "harness/compiler.hpp"
#include "harness/sandbox.hpp"

namespace tessera::bench {

namespace detail {

namespace {
constexpr const char* kCacheVariable = "TESSERA_CACHE_DIR";
// What a warm-up must not measure again: the device ceilings and the
// baselines' autotuned algorithms, both stored per GPU.
constexpr const char* kKeptFolders[] = {"devices", "baselines"};
}  // namespace

ScaleCache::ScaleCache() {
  if (const char* v = std::getenv(kCacheVariable)) previous_ = v;
  const auto from = cache_dir();
  dir_ = std::filesystem::temp_directory_path() / fmt::format("tessera-scale-{}", ::getpid());
  std::filesystem::remove_all(dir_);
  std::filesystem::create_directories(dir_);
  for (const char* folder : kKeptFolders) {
    std::error_code ec;  // nothing stored yet is fine: the warm-up measures it
    if (std::filesystem::is_directory(from / folder, ec))
      std::filesystem::copy(from / folder, dir_ / folder, std::filesystem::copy_options::recursive, ec);
  }
  ::setenv(kCacheVariable, dir_.c_str(), 1);
}

ScaleCache::~ScaleCache() {
  if (previous_) ::setenv(kCacheVariable, previous_->c_str(), 1);
  else ::unsetenv(kCacheVariable);
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

void ScaleCache::clear_kernels() const { clear_compiled(dir_ / "kernels"); }

ScaleProgress::ScaleProgress(bool enabled, long long total) : total_(std::max(1LL, total)) {
  if (enabled) bar_ = std::make_unique<ProgressBar>("bench scale");
}

void ScaleProgress::advance(const std::string& what) {
  std::lock_guard g(mu_);
  ++done_;
  if (bar_) bar_->update(double(done_) / double(total_), fmt::format("{} ({}/{})", what, done_, total_));
}

void ScaleProgress::message(const std::string& line) {
  std::lock_guard g(mu_);
  if (bar_) bar_->message(line);
}

void ScaleProgress::finish() {
  std::lock_guard g(mu_);
  if (bar_) bar_->clear();
}

std::vector<Candidate> scale_candidates(const Candidate& base, const std::string& tag, int n) {
  std::vector<Candidate> out;
  for (int i = 0; i < n; ++i) {
    Candidate c = base;
    c.source = fmt::format("#define TESSERA_BENCH_VARIANT {}_{}\n{}", tag, i, base.source);
    c.name = fmt::format("scale-{}-{}", tag, i);
    out.push_back(std::move(c));
  }
  return out;
}

ScalePoint new_point(const std::string& path, const Task& task, const std::vector<int>& devices) {
  ScalePoint p;
  p.path = path;
  p.shape = task.shape();
  p.gpus = int(devices.size());
  p.devices = devices;
  return p;
}

std::vector<int> devices_of(const ScaleOptions& o, int gpus) {
  return {o.devices.begin(), o.devices.begin() + gpus};
}

void note_nvml(ScaleRun& run, const std::string& problem) {
  if (run.nvml.empty()) run.nvml = problem.empty() ? "available" : problem;
}

}  // namespace detail

std::string to_string(ScalePath p) {
  switch (p) {
    case ScalePath::pool: return "pool";
    case ScalePath::serve: return "serve";
    case ScalePath::search: return "search";
  }
  return "?";
}

ScalePath parse_scale_path(const std::string& name) {
  for (ScalePath p : {ScalePath::pool, ScalePath::serve, ScalePath::search})
    if (to_string(p) == name) return p;
  fail_bad_input(fmt::format("--path: unknown path '{}' (pool, serve or search)", name));
}

void validate(const ScaleOptions& o) {
  if (o.devices.empty()) fail_bad_input("--gpus: no devices to scale over");
  if (o.counts.empty()) fail_bad_input("--counts: no GPU counts");
  for (int k : o.counts) {
    if (k < 1) fail_bad_input(fmt::format("--counts: {} GPUs is not a point (counts start at 1)", k));
    if (k > int(o.devices.size()))
      fail_bad_input(fmt::format("--counts: {} GPUs asked for, but --gpus gives {} ({})", k, o.devices.size(),
                                 fmt::join(o.devices, ",")));
  }
  if (!std::is_sorted(o.counts.begin(), o.counts.end()) ||
      std::adjacent_find(o.counts.begin(), o.counts.end()) != o.counts.end())
    fail_bad_input(fmt::format("--counts must rise without repeats (got {})", fmt::join(o.counts, ",")));
  if (o.tasks.empty()) fail_bad_input("--shape: no task to evaluate");
  if (o.paths.empty()) fail_bad_input("--path: no path to measure");
  if (o.per_gpu < 1) fail_bad_input(fmt::format("--count must be 1 or more (got {})", o.per_gpu));
  if (o.clients < 1) fail_bad_input(fmt::format("--clients must be 1 or more (got {})", o.clients));
  if (!(o.sample_period_s > 0)) fail_bad_input("the NVML sample period must be above 0 s");
  validate(o.eval, "evaluation options");
}

ScaleReport run_scale(const ScaleOptions& o) {
  validate(o);
  ScaleReport report;
  report.started_at = utc_now_iso();
  report.cache = o.warm_cache ? "warm" : "cold";
  report.per_gpu = o.per_gpu;
  report.clients = o.clients;
  report.counters = o.eval.counters;
  report.source = o.source.string();
  const bool compile_only = o.eval.compile_only || o.sandbox.mode == EvalMode::compile_only ||
                            (o.sandbox.mode == EvalMode::auto_detect && !gpu_present());
  report.mode = compile_only ? "compile_only" : "full";

  long long total = 0;
  for (int k : o.counts) total += (long long)k * o.per_gpu;
  total *= (long long)(o.tasks.size() * o.paths.size());
  detail::ScaleCache cache;
  detail::ScaleProgress progress(o.progress, total);
  detail::ScaleRun run{o, cache, progress, load_candidate(o.source), compile_only, {}};
  for (ScalePath path : o.paths)
    for (int k : o.counts) {
      auto points = path == ScalePath::pool    ? detail::run_pool_points(run, k)
                    : path == ScalePath::serve ? detail::run_serve_points(run, k)
                                               : detail::run_search_points(run, k);
      for (auto& p : points) report.points.push_back(std::move(p));
    }
  progress.finish();
  report.nvml = run.nvml;
  fill_scaling(report);
  return report;
}

}  // namespace tessera::bench
