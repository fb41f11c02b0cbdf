#include "worker/counters.hpp"

#include <cuda.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_target.h>

#include <algorithm>
#include <optional>
#include <cmath>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "worker/baselines/kernels.hpp"
#include "worker/check.hpp"
#include "worker/handles.hpp"
#include "worker/lap_clock.hpp"

namespace tessera::worker {

namespace {

constexpr const char* kRangeName = "tessera_call";
constexpr const char* kMethodPerKernel = "cupti_range_profiler:auto_range+kernel_replay";
constexpr const char* kMethodPerKernelCallReplay = "cupti_range_profiler:auto_range+user_replay";
constexpr const char* kMethodWholeCall = "cupti_range_profiler:user_range+user_replay";
constexpr const char* kDurationMetric = "gpu__time_duration.sum";  // ns; weights the per-kernel ranges
constexpr std::size_t kMaxKernelsPerCall = 64;  // ranges kept in per-kernel mode; more are dropped and counted
constexpr int kMaxReplayPasses = 64;            // a metric set needing more is refused, not looped on
constexpr std::size_t kL2FlushMultiple = 2;  // flush buffer = this many times the L2 size
constexpr unsigned kDriverApiVersion = 12000;  // cuCtxGetCurrent has been stable since CUDA 4

std::string no_gpu_reason() {
  int n = 0;
  const cudaError_t err = cudaGetDeviceCount(&n);
  if (err != cudaSuccess) return fmt::format("no CUDA GPU: {}", cudaGetErrorString(err));
  if (n == 0) return "no CUDA GPU: cudaGetDeviceCount reports 0 devices";
  return {};
}

template <class P>
P params(std::size_t struct_size) {
  P p{};
  p.structSize = struct_size;
  return p;
}

// A CUPTI failure becomes an `unavailable` error whose text ends up in
// {"error": ...}; the privilege case says how to fix it.
void cupti_ok(CUptiResult r, const char* call) {
  if (r == CUPTI_SUCCESS) return;
  std::string msg = fmt::format("{}: {}", call, cupti_result_name(r));
  if (r == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES)
    msg += " (GPU performance counters are restricted to admin users: run as root, or load the nvidia module with "
           "NVreg_RestrictProfilingToAdminUsers=0)";
  throw Error(Error::Kind::unavailable, std::move(msg));
}

// cuptiProfilerInitialize once per process, never deinitialised (the worker
// keeps profiling until it exits).
void ensure_profiler_initialized() {
  static const CUptiResult status = [] {
    auto p = params<CUpti_Profiler_Initialize_Params>(CUpti_Profiler_Initialize_Params_STRUCT_SIZE);
    return cuptiProfilerInitialize(&p);
  }();
  cupti_ok(status, "cuptiProfilerInitialize");
}

// The driver library is never linked (cmake/Dependencies.cmake); its entry
// points come through the runtime.
CUcontext current_context() {
  TESSERA_CUDA_CHECK(cudaFree(nullptr));  // makes the primary context current
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult q{};
  TESSERA_CUDA_CHECK(cudaGetDriverEntryPointByVersion("cuCtxGetCurrent", &fn, kDriverApiVersion, cudaEnableDefault, &q));
  if (fn == nullptr || q != cudaDriverEntryPointSuccess)
    throw Error(Error::Kind::unavailable, "cuCtxGetCurrent is not available from the driver");
  CUcontext ctx = nullptr;
  if (reinterpret_cast<CUresult (*)(CUcontext*)>(fn)(&ctx) != CUDA_SUCCESS || ctx == nullptr)
    throw Error(Error::Kind::unavailable, "no current CUDA context");
  return ctx;
}

std::string support_problem(int device) {
  auto p = params<CUpti_Profiler_DeviceSupported_Params>(CUpti_Profiler_DeviceSupported_Params_STRUCT_SIZE);
  p.cuDevice = device;
  p.api = CUPTI_PROFILER_RANGE_PROFILING;
  cupti_ok(cuptiProfilerDeviceSupported(&p), "cuptiProfilerDeviceSupported");
  if (p.isSupported == CUPTI_PROFILER_CONFIGURATION_SUPPORTED) return {};
  std::vector<std::string> why;
  auto note = [&](CUpti_Profiler_Support_Level level, const char* what) {
    if (level == CUPTI_PROFILER_CONFIGURATION_UNSUPPORTED) why.push_back(fmt::format("{} unsupported", what));
    if (level == CUPTI_PROFILER_CONFIGURATION_DISABLED) why.push_back(fmt::format("{} disabled", what));
  };
  note(p.architecture, "architecture");
  note(p.sli, "SLI");
  note(p.vGpu, "vGPU profiling");
  note(p.confidentialCompute, "confidential compute");
  note(p.cmp, "CMP device");
  note(p.wsl, "WSL");
  return fmt::format("range profiling is not supported on this device ({})",
                     why.empty() ? std::string("no reason given") : fmt::format("{}", fmt::join(why, ", ")));
}

std::string chip_name(int device) {
  auto p = params<CUpti_Device_GetChipName_Params>(CUpti_Device_GetChipName_Params_STRUCT_SIZE);
  p.deviceIndex = std::size_t(device);
  cupti_ok(cuptiDeviceGetChipName(&p), "cuptiDeviceGetChipName");
  return p.pChipName ? p.pChipName : "";
}

std::vector<std::uint8_t> read_counter_availability(CUcontext ctx) {
  auto p = params<CUpti_Profiler_GetCounterAvailability_Params>(
      CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE);
  p.ctx = ctx;
  cupti_ok(cuptiProfilerGetCounterAvailability(&p), "cuptiProfilerGetCounterAvailability(size)");
  std::vector<std::uint8_t> image(p.counterAvailabilityImageSize);
  p.pCounterAvailabilityImage = image.data();
  cupti_ok(cuptiProfilerGetCounterAvailability(&p), "cuptiProfilerGetCounterAvailability");
  return image;
}

// Read once per context: the image describes the device's counters, which
// do not change while the worker runs.
const std::vector<std::uint8_t>& counter_availability(CUcontext ctx) {
  static std::mutex mu;
  static std::map<CUcontext, std::vector<std::uint8_t>> cache;
  std::lock_guard lock(mu);
  auto it = cache.find(ctx);
  if (it == cache.end()) it = cache.emplace(ctx, read_counter_availability(ctx)).first;
  return it->second;
}

class HostObject {
public:
  HostObject(const std::string& chip, const std::vector<std::uint8_t>& availability) {
    auto p = params<CUpti_Profiler_Host_Initialize_Params>(CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE);
    p.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
    p.pChipName = chip.c_str();
    p.pCounterAvailabilityImage = availability.empty() ? nullptr : availability.data();
    cupti_ok(cuptiProfilerHostInitialize(&p), "cuptiProfilerHostInitialize");
    h_ = p.pHostObject;
  }
  HostObject(const HostObject&) = delete;
  HostObject& operator=(const HostObject&) = delete;
  ~HostObject() noexcept {
    if (!h_) return;
    auto p = params<CUpti_Profiler_Host_Deinitialize_Params>(CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE);
    p.pHostObject = h_;
    cuptiProfilerHostDeinitialize(&p);
  }
  CUpti_Profiler_Host_Object* get() const { return h_; }

private:
  CUpti_Profiler_Host_Object* h_ = nullptr;
};

CUptiResult add_metrics(const HostObject& host, std::vector<const char*> names) {
  auto p = params<CUpti_Profiler_Host_ConfigAddMetrics_Params>(CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE);
  p.pHostObject = host.get();
  p.ppMetricNames = names.data();
  p.numMetrics = names.size();
  return cuptiProfilerHostConfigAddMetrics(&p);
}

// The host object, config image and accepted metrics for one (chip, metric
// list): built once per worker, since host initialisation is the slow part.
struct ProfilerConfig {
  std::unique_ptr<HostObject> host;
  std::vector<std::string> accepted;
  nlohmann::json rejected = nlohmann::json::object();
  std::vector<std::uint8_t> image;
  std::size_t passes = 0;

  std::vector<const char*> names() const {
    std::vector<const char*> v;
    for (const auto& m : accepted) v.push_back(m.c_str());
    return v;
  }
};

std::shared_ptr<const ProfilerConfig> build_config(const std::string& chip, const std::vector<std::uint8_t>& avail,
                                                   const std::vector<std::string>& metrics) {
  auto cfg = std::make_shared<ProfilerConfig>();
  cfg->host = std::make_unique<HostObject>(chip, avail);
  for (const auto& m : metrics) {
    auto p = params<CUpti_Profiler_Host_GetMetricProperties_Params>(
        CUpti_Profiler_Host_GetMetricProperties_Params_STRUCT_SIZE);
    p.pHostObject = cfg->host->get();
    p.pMetricName = m.c_str();
    const CUptiResult r = cuptiProfilerHostGetMetricProperties(&p);
    if (r == CUPTI_SUCCESS)
      cfg->accepted.push_back(m);
    else
      cfg->rejected[m] = fmt::format("not available on {}: {}", chip, cupti_result_name(r));
  }
  if (!cfg->accepted.empty() && add_metrics(*cfg->host, cfg->names()) != CUPTI_SUCCESS) {
    // One name passed the property check but cannot be scheduled: find it on
    // a fresh host object, adding the metrics one at a time.
    cfg->host = std::make_unique<HostObject>(chip, avail);
    std::vector<std::string> kept;
    for (const auto& m : cfg->accepted) {
      const CUptiResult r = add_metrics(*cfg->host, {m.c_str()});
      if (r == CUPTI_SUCCESS)
        kept.push_back(m);
      else
        cfg->rejected[m] = fmt::format("cannot be scheduled on {}: {}", chip, cupti_result_name(r));
    }
    cfg->accepted = std::move(kept);
  }
  if (cfg->accepted.empty())
    throw Error(Error::Kind::unavailable, fmt::format("none of the requested metrics is available on {}", chip));

  auto sz = params<CUpti_Profiler_Host_GetConfigImageSize_Params>(
      CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE);
  sz.pHostObject = cfg->host->get();
  cupti_ok(cuptiProfilerHostGetConfigImageSize(&sz), "cuptiProfilerHostGetConfigImageSize");
  cfg->image.resize(sz.configImageSize);
  auto img = params<CUpti_Profiler_Host_GetConfigImage_Params>(CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE);
  img.pHostObject = cfg->host->get();
  img.configImageSize = cfg->image.size();
  img.pConfigImage = cfg->image.data();
  cupti_ok(cuptiProfilerHostGetConfigImage(&img), "cuptiProfilerHostGetConfigImage");
  auto np = params<CUpti_Profiler_Host_GetNumOfPasses_Params>(CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE);
  np.configImageSize = cfg->image.size();
  np.pConfigImage = cfg->image.data();
  cupti_ok(cuptiProfilerHostGetNumOfPasses(&np), "cuptiProfilerHostGetNumOfPasses");
  cfg->passes = np.numOfPasses;
  return cfg;
}

std::shared_ptr<const ProfilerConfig> config_for(const std::string& chip, const std::vector<std::uint8_t>& avail,
                                                 const std::vector<std::string>& metrics) {
  static std::mutex mu;
  static std::map<std::string, std::shared_ptr<const ProfilerConfig>> cache;
  std::string key = chip;
  for (const auto& m : metrics) key += "|" + m;
  std::lock_guard lock(mu);
  auto& slot = cache[key];
  if (!slot) slot = build_config(chip, avail, metrics);
  return slot;
}

// Range profiling enabled on a context for the lifetime of this object.
class RangeProfiler {
public:
  explicit RangeProfiler(CUcontext ctx) {
    auto p = params<CUpti_RangeProfiler_Enable_Params>(CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE);
    p.ctx = ctx;
    cupti_ok(cuptiRangeProfilerEnable(&p), "cuptiRangeProfilerEnable");
    obj_ = p.pRangeProfilerObject;
  }
  RangeProfiler(const RangeProfiler&) = delete;
  RangeProfiler& operator=(const RangeProfiler&) = delete;
  ~RangeProfiler() noexcept {
    if (!obj_) return;
    auto p = params<CUpti_RangeProfiler_Disable_Params>(CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE);
    p.pRangeProfilerObject = obj_;
    cuptiRangeProfilerDisable(&p);
  }
  CUpti_RangeProfiler_Object* get() const { return obj_; }

private:
  CUpti_RangeProfiler_Object* obj_ = nullptr;
};

// One profiling pass: Start (+ PushRange for a user range) now, PopRange +
// Stop in finish() or, if the launch threw, in the destructor, so the
// profiler is never left running.
class Pass {
public:
  Pass(CUpti_RangeProfiler_Object* obj, bool user_range) : obj_(obj) {
    auto s = params<CUpti_RangeProfiler_Start_Params>(CUpti_RangeProfiler_Start_Params_STRUCT_SIZE);
    s.pRangeProfilerObject = obj_;
    cupti_ok(cuptiRangeProfilerStart(&s), "cuptiRangeProfilerStart");
    started_ = true;
    if (!user_range) return;
    auto p = params<CUpti_RangeProfiler_PushRange_Params>(CUpti_RangeProfiler_PushRange_Params_STRUCT_SIZE);
    p.pRangeProfilerObject = obj_;
    p.pRangeName = kRangeName;
    cupti_ok(cuptiRangeProfilerPushRange(&p), "cuptiRangeProfilerPushRange");
    pushed_ = true;
  }
  Pass(const Pass&) = delete;
  Pass& operator=(const Pass&) = delete;
  ~Pass() noexcept {
    if (pushed_) pop();
    if (started_) stop();
  }
  // Returns true once every pass has been submitted.
  bool finish() {
    if (pushed_) {
      pushed_ = false;
      cupti_ok(pop(), "cuptiRangeProfilerPopRange");
    }
    started_ = false;
    auto s = params<CUpti_RangeProfiler_Stop_Params>(CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE);
    s.pRangeProfilerObject = obj_;
    cupti_ok(cuptiRangeProfilerStop(&s), "cuptiRangeProfilerStop");
    return s.isAllPassSubmitted != 0;
  }

private:
  CUptiResult pop() noexcept {
    auto p = params<CUpti_RangeProfiler_PopRange_Params>(CUpti_RangeProfiler_PopRange_Params_STRUCT_SIZE);
    p.pRangeProfilerObject = obj_;
    return cuptiRangeProfilerPopRange(&p);
  }
  void stop() noexcept {
    auto s = params<CUpti_RangeProfiler_Stop_Params>(CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE);
    s.pRangeProfilerObject = obj_;
    cuptiRangeProfilerStop(&s);
  }
  CUpti_RangeProfiler_Object* obj_;
  bool started_ = false, pushed_ = false;
};

// The profiled call itself failed (a faulting candidate): no other mode can help.
struct LaunchFailed : std::runtime_error {
  using std::runtime_error::runtime_error;
};

nlohmann::json collect_or_throw(const LaunchFn& launch, cudaStream_t stream, const CounterOptions& opt) {
  if (opt.metrics.empty()) throw Error(Error::Kind::bad_input, "no metrics requested");
  // Wall time of the profiler's own steps ("profile_ms", docs/counters.md).
  LapClock clock;
  nlohmann::json profile_ms = nlohmann::json::object();
  if (std::string why = no_gpu_reason(); !why.empty()) throw Error(Error::Kind::unavailable, why);
  ensure_profiler_initialized();
  int device = 0;
  TESSERA_CUDA_CHECK(cudaGetDevice(&device));
  const CUcontext ctx = current_context();
  if (std::string why = support_problem(device); !why.empty()) throw Error(Error::Kind::unavailable, why);
  const std::string chip = chip_name(device);
  std::vector<std::string> metrics = opt.metrics;
  // Auto ranges (one per kernel): CUPTI replays each kernel (kernel replay) or
  // tessera re-runs the whole call once per pass (call replay).
  const bool auto_range = opt.mode != CounterMode::whole_call;
  const bool kernel_replay = opt.mode == CounterMode::per_kernel;
  if (auto_range && std::find(metrics.begin(), metrics.end(), kDurationMetric) == metrics.end())
    metrics.emplace_back(kDurationMetric);
  const auto cfg = config_for(chip, counter_availability(ctx), metrics);
  const std::vector<const char*> names = cfg->names();

  DeviceBuffer flush;
  if (opt.flush_l2) {
    int l2 = 0;
    TESSERA_CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device));
    flush = DeviceBuffer(std::size_t(l2) * kL2FlushMultiple);
  }

  profile_ms["setup"] = clock.lap();

  const std::size_t max_ranges = auto_range ? kMaxKernelsPerCall : 1;
  std::optional<RangeProfiler> rp_holder(std::in_place, ctx);
  const RangeProfiler& rp = *rp_holder;
  auto ds = params<CUpti_RangeProfiler_GetCounterDataSize_Params>(
      CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE);
  ds.pRangeProfilerObject = rp.get();
  ds.pMetricNames = const_cast<const char**>(names.data());
  ds.numMetrics = names.size();
  ds.maxNumOfRanges = max_ranges;
  ds.maxNumRangeTreeNodes = static_cast<std::uint32_t>(max_ranges);
  cupti_ok(cuptiRangeProfilerGetCounterDataSize(&ds), "cuptiRangeProfilerGetCounterDataSize");
  std::vector<std::uint8_t> data(ds.counterDataSize);
  auto di = params<CUpti_RangeProfiler_CounterDataImage_Initialize_Params>(
      CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE);
  di.pRangeProfilerObject = rp.get();
  di.counterDataSize = data.size();
  di.pCounterData = data.data();
  cupti_ok(cuptiRangeProfilerCounterDataImageInitialize(&di), "cuptiRangeProfilerCounterDataImageInitialize");

  auto sc = params<CUpti_RangeProfiler_SetConfig_Params>(CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE);
  sc.pRangeProfilerObject = rp.get();
  sc.configSize = cfg->image.size();
  sc.pConfig = cfg->image.data();
  sc.counterDataImageSize = data.size();
  sc.pCounterDataImage = data.data();
  sc.range = auto_range ? CUPTI_AutoRange : CUPTI_UserRange;
  sc.replayMode = kernel_replay ? CUPTI_KernelReplay : CUPTI_UserReplay;
  sc.maxRangesPerPass = max_ranges;
  sc.numNestingLevels = 1;
  sc.minNestingLevel = 1;
  sc.passIndex = 0;
  sc.targetNestingLevel = 1;
  cupti_ok(cuptiRangeProfilerSetConfig(&sc), "cuptiRangeProfilerSetConfig");
  profile_ms["enable"] = clock.lap();

  // Kernel replay: one call, CUPTI replays each kernel (saving and restoring
  // every device allocation) for every pass. Call replay and whole call:
  // tessera re-runs the call once per pass, nothing is saved or restored.
  int calls = 0;
  bool all_submitted = false;
  while (!all_submitted) {
    if (calls >= (kernel_replay ? 1 : kMaxReplayPasses)) {
      if (kernel_replay) break;  // kernel replay submits its passes inside the call
      throw Error(Error::Kind::unavailable, fmt::format("metric set needs more than {} passes", kMaxReplayPasses));
    }
    if (flush.get()) {
      TESSERA_CUDA_CHECK(cudaMemsetAsync(flush.get(), calls & 0xff, flush.bytes(), stream));
      TESSERA_CUDA_CHECK(cudaStreamSynchronize(stream));
    }
    Pass pass(rp.get(), !auto_range);
    try {
      launch(stream);
      // Ranges cover the whole context: wait for all of it, not just `stream`.
      TESSERA_CUDA_CHECK(cudaDeviceSynchronize());
    } catch (const std::exception& e) {
      throw LaunchFailed(e.what());
    }
    all_submitted = pass.finish();
    ++calls;
  }
  profile_ms["passes"] = clock.lap();

  auto dd = params<CUpti_RangeProfiler_DecodeData_Params>(CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE);
  dd.pRangeProfilerObject = rp.get();
  cupti_ok(cuptiRangeProfilerDecodeData(&dd), "cuptiRangeProfilerDecodeData");
  auto info = params<CUpti_RangeProfiler_GetCounterDataInfo_Params>(
      CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE);
  info.pCounterDataImage = data.data();
  info.counterDataImageSize = data.size();
  cupti_ok(cuptiRangeProfilerGetCounterDataInfo(&info), "cuptiRangeProfilerGetCounterDataInfo");
  if (info.numTotalRanges < 1)
    throw Error(Error::Kind::unavailable, "the profiler recorded no range (did the call launch any kernel?)");

  // One row of values per range (per kernel, or the one user range).
  std::vector<std::vector<double>> rows;
  for (std::size_t r = 0; r < info.numTotalRanges; ++r) {
    std::vector<double> values(names.size(), NAN);
    auto ev = params<CUpti_Profiler_Host_EvaluateToGpuValues_Params>(
        CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE);
    ev.pHostObject = cfg->host->get();
    ev.pCounterDataImage = data.data();
    ev.counterDataImageSize = data.size();
    ev.rangeIndex = r;
    ev.ppMetricNames = const_cast<const char**>(names.data());
    ev.numMetrics = names.size();
    ev.pMetricValues = values.data();
    cupti_ok(cuptiProfilerHostEvaluateToGpuValues(&ev), "cuptiProfilerHostEvaluateToGpuValues");
    rows.push_back(std::move(values));
  }

  // Kernels are weighted by their duration (equal weights if unavailable).
  const auto dur_it = std::find(cfg->accepted.begin(), cfg->accepted.end(), kDurationMetric);
  std::vector<double> weights(rows.size(), 1.0);
  if (dur_it != cfg->accepted.end()) {
    const std::size_t d = std::size_t(dur_it - cfg->accepted.begin());
    bool ok = true;
    for (const auto& row : rows) ok = ok && std::isfinite(row[d]) && row[d] > 0;
    if (ok)
      for (std::size_t r = 0; r < rows.size(); ++r) weights[r] = rows[r][d];
  }
  profile_ms["decode"] = clock.lap();
  rp_holder.reset();
  profile_ms["disable"] = clock.lap();
  const nlohmann::json raw = aggregate_ranges(cfg->accepted, rows, weights);
  nlohmann::json out = summarize_counters(raw);
  out["raw"] = raw;
  out["raw_errors"] = cfg->rejected;
  out["passes"] = kernel_replay ? int(cfg->passes) : calls;
  out["ranges"] = info.numTotalRanges;
  out["ranges_dropped"] = dd.numOfRangeDropped;
  out["chip"] = chip;
  out["method"] = kernel_replay ? kMethodPerKernel : auto_range ? kMethodPerKernelCallReplay : kMethodWholeCall;
  out["l2_flushed"] = opt.flush_l2;
  out["profile_ms"] = profile_ms;
  return out;
}

}  // namespace

nlohmann::json collect_counters(const LaunchFn& launch, cudaStream_t stream, const CounterOptions& options) {
  try {
    return collect_or_throw(launch, stream, options);
  } catch (const LaunchFailed& e) {
    return {{"error", e.what()}};
  } catch (const std::exception& e) {
    if (options.mode == CounterMode::whole_call) return {{"error", e.what()}};
    // Call replay refused: let CUPTI replay each kernel. Kernel replay refused
    // (some drivers or call patterns): one range around the whole call still
    // gives counters, with diluted elapsed rates.
    CounterOptions next = options;
    next.mode = options.mode == CounterMode::per_kernel_call_replay ? CounterMode::per_kernel : CounterMode::whole_call;
    nlohmann::json r = collect_counters(launch, stream, next);
    if (!r.contains("error") && !r.contains("fallback_reason")) r["fallback_reason"] = e.what();
    return r;
  } catch (...) {
    return {{"error", "unknown failure while reading counters"}};
  }
}

std::size_t profiler_passes(const std::string& chip, const std::vector<std::string>& metrics) {
  // No counter availability image: the host API then assumes every counter
  // of the chip is available, which is what a pass count needs.
  return config_for(chip, {}, metrics)->passes;
}

std::string probe_counters() {
  constexpr std::size_t kProbeElems = std::size_t{1} << 20;
  try {
    if (std::string why = no_gpu_reason(); !why.empty()) return why;
    Stream stream;
    DeviceBuffer buf(kProbeElems * sizeof(__half));
    CounterOptions opt;
    opt.metrics = {default_metrics().front()};
    opt.flush_l2 = false;
    const nlohmann::json r = collect_counters(
        [&](cudaStream_t s) { baselines::fill_random_half(buf.as<__half>(), kProbeElems, 1, -1.0f, 1.0f, s); },
        stream.get(), opt);
    if (r.contains("error")) return r.at("error").get<std::string>();
    if (!r.at("raw").begin()->is_number()) return "the profiler returned no value for a basic metric";
    return {};
  } catch (const std::exception& e) {
    return e.what();
  }
}

}  // namespace tessera::worker
