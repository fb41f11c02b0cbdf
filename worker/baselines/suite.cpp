#include <cublasLt.h>
#include <cublas_v2.h>

#include <algorithm>
#include <cstdint>
#include <exception>
#include <numeric>
#include <optional>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "core/json_read.hpp"
#include "worker/baselines/autotune_cache.hpp"
#include "worker/baselines/baselines.hpp"
#include "worker/baselines/detail/blas_handles.hpp"
#include "worker/baselines/detail/lt_algo.hpp"
#include "worker/baselines/kernels.hpp"
#include "core/fs.hpp"
#include "worker/check.hpp"
#include "worker/handles.hpp"

namespace tessera::baselines {

namespace {

// Autotuning compares algorithms against each other, so it can use a looser
// protocol than the final measurement (which re-times the winner anyway).
constexpr double kAutotuneMaxTimeMsPerAlgo = 400.0;
constexpr double kAutotuneMinTimeMs = 5.0;
constexpr int kAutotuneMinSamples = 5;
constexpr std::size_t kAutotuneFinalists = 3;  // round one's fastest, re-timed under the full rule

// Restores the timer's options however prepare() exits.
class TimerOptionsGuard {
public:
  explicit TimerOptionsGuard(worker::Timer& t) : timer_(t), saved_(t.options()) {}
  ~TimerOptionsGuard() noexcept { timer_.set_options(saved_); }
  TimerOptionsGuard(const TimerOptionsGuard&) = delete;
  TimerOptionsGuard& operator=(const TimerOptionsGuard&) = delete;

private:
  worker::Timer& timer_;
  worker::TimingOptions saved_;
};

worker::TimingOptions autotune_options(worker::TimingOptions o) {
  o.timeout_ms = std::min(o.timeout_ms, kAutotuneMaxTimeMsPerAlgo);
  o.min_time_ms = std::min(o.min_time_ms, kAutotuneMinTimeMs);
  o.min_samples = std::min(o.min_samples, kAutotuneMinSamples);
  return o;
}

cublasLtEpilogue_t lt_epilogue(Epilogue e) {
  switch (e) {
    case Epilogue::none: return CUBLASLT_EPILOGUE_DEFAULT;
    case Epilogue::bias: return CUBLASLT_EPILOGUE_BIAS;
    case Epilogue::bias_relu: return CUBLASLT_EPILOGUE_RELU_BIAS;
    case Epilogue::bias_gelu: return CUBLASLT_EPILOGUE_GELU_BIAS;
  }
  return CUBLASLT_EPILOGUE_DEFAULT;
}

constexpr std::uint32_t kMaxLtAlignmentBytes = 256;  // cuBLASLt's default assumption for every matrix pointer

// The largest power of two (up to 256) dividing the address: the heuristic
// must not pick an algorithm that needs more alignment than the buffers have
// (a worker may place operands between canary bands).
std::uint32_t pointer_alignment(const void* p) {
  const auto a = reinterpret_cast<std::uintptr_t>(p);
  std::uint32_t align = kMaxLtAlignmentBytes;
  while (align > 1 && a % align != 0) align /= 2;
  return align;
}

std::string device_uuid_hex(const cudaDeviceProp& p) {
  std::string s;
  for (char c : p.uuid.bytes) s += fmt::format("{:02x}", static_cast<unsigned char>(c));
  return s;
}

}  // namespace

struct BaselineSuite::Impl {
  Task task;
  GemmOperands ops;
  cudaStream_t stream;
  SuiteOptions opt;
  const float alpha = 1.0f;
  const float beta = 0.0f;

  worker::DeviceBuffer b_other;  // B in the layout the task does not use
  worker::DeviceBuffer cublas_ws;
  worker::DeviceBuffer lt_ws;
  detail::CublasHandle cublas;
  cudaStream_t cublas_stream = nullptr;  // stream the cuBLAS handle is bound to

  detail::LtHandle lt;
  detail::LtMatmulDesc desc;
  detail::LtLayout a_desc, b_desc, c_desc;
  detail::LtPreference pref;
  std::vector<cublasLtMatmulHeuristicResult_t> heuristics;
  std::string lt_error;  // why the cuBLASLt baselines cannot run, if they cannot
  std::string alignment; // of the operand pointers, part of the cache key

  std::vector<Baseline> list;
  nlohmann::json report = nlohmann::json::object();
  std::optional<AutotuneCache> cache;
  CacheKey key;
  std::optional<AutotuneEntry> entry;
  nlohmann::json previous_times = nlohmann::json::object();
  // A profiler attached to this process (attached_profiler): the cache is read,
  // never written, since every time measured under it is wrong.
  std::string profiler;

  bool has_epilogue() const { return ops.epilogue != Epilogue::none; }
  const __half* b_for(Layout l) const { return l == ops.layout ? ops.B : b_other.as<const __half>(); }

  void transpose_b() {
    // TN: B is N×K -> K×N (NN). NN: B is K×N -> N×K (TN).
    const int rows = ops.layout == Layout::TN ? ops.N : ops.K;
    const int cols = ops.layout == Layout::TN ? ops.K : ops.N;
    transpose_half(ops.B, b_other.as<__half>(), rows, cols, stream);
    TESSERA_CUDA_CHECK(cudaStreamSynchronize(stream));
  }

  void bind_cublas(cudaStream_t s) {
    if (s == cublas_stream) return;
    // cublasSetStream resets the handle to the default workspace pool, so the
    // user workspace is set again after it.
    TESSERA_CUBLAS_CHECK(cublasSetStream(cublas.get(), s));
    TESSERA_CUBLAS_CHECK(cublasSetWorkspace(cublas.get(), cublas_ws.get(), cublas_ws.bytes()));
    cublas_stream = s;
  }

  worker::LaunchFn gemm_ex_launch(Layout layout) {
    const GemmArgs g = gemm_args(layout, ops.M, ops.N, ops.K);
    const __half* b = b_for(layout);
    return [this, g, b](cudaStream_t s) {
      bind_cublas(s);
      TESSERA_CUBLAS_CHECK(cublasGemmEx(cublas.get(), g.transa, g.transb, g.m, g.n, g.k, &alpha, b, CUDA_R_16F, g.lda,
                                        ops.A, CUDA_R_16F, g.ldb, &beta, ops.C, CUDA_R_16F, g.ldc, CUBLAS_COMPUTE_32F,
                                        CUBLAS_GEMM_DEFAULT));
    };
  }

  worker::LaunchFn lt_launch(const cublasLtMatmulAlgo_t& algo) {
    return [this, algo](cudaStream_t s) {
      TESSERA_CUBLAS_CHECK(cublasLtMatmul(lt.get(), desc.get(), &alpha, ops.B, a_desc.get(), ops.A, b_desc.get(), &beta,
                                          ops.C, c_desc.get(), ops.C, c_desc.get(), &algo, lt_ws.get(), lt_ws.bytes(), s));
    };
  }

  void setup_cublas() {
    cublas = detail::make_cublas();
    cublas_ws = worker::DeviceBuffer(opt.workspace_bytes);
    bind_cublas(stream);
    if (!has_epilogue()) {
      b_other = worker::DeviceBuffer(std::size_t(ops.N) * std::size_t(ops.K) * sizeof(__half));
      transpose_b();
    }
  }

  void setup_lt() {
    lt = detail::make_lt();
    lt_ws = worker::DeviceBuffer(opt.workspace_bytes);
    const GemmArgs g = gemm_args(ops.layout, ops.M, ops.N, ops.K);
    desc = detail::make_matmul_desc(CUBLAS_COMPUTE_32F, CUDA_R_32F);
    TESSERA_CUBLAS_CHECK(
        cublasLtMatmulDescSetAttribute(desc.get(), CUBLASLT_MATMUL_DESC_TRANSA, &g.transa, sizeof(g.transa)));
    TESSERA_CUBLAS_CHECK(
        cublasLtMatmulDescSetAttribute(desc.get(), CUBLASLT_MATMUL_DESC_TRANSB, &g.transb, sizeof(g.transb)));
    if (has_epilogue()) {
      // Bias length = rows of the column-major D = N; its type defaults to D's (fp16).
      const cublasLtEpilogue_t epi = lt_epilogue(ops.epilogue);
      const void* bias = ops.bias;
      TESSERA_REQUIRE(bias != nullptr, "epilogue task without a bias pointer");
      TESSERA_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(desc.get(), CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof(epi)));
      TESSERA_CUBLAS_CHECK(
          cublasLtMatmulDescSetAttribute(desc.get(), CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof(bias)));
    }
    a_desc = detail::make_layout(CUDA_R_16F, std::uint64_t(g.a_rows), std::uint64_t(g.a_cols), g.lda);
    b_desc = detail::make_layout(CUDA_R_16F, std::uint64_t(g.b_rows), std::uint64_t(g.b_cols), g.ldb);
    c_desc = detail::make_layout(CUDA_R_16F, std::uint64_t(g.c_rows), std::uint64_t(g.c_cols), g.ldc);
    pref = detail::make_preference();
    const std::uint64_t ws = opt.workspace_bytes;
    TESSERA_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(pref.get(), CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws,
                                                             sizeof(ws)));
    // cuBLASLt's A is the task's B, its B the task's A, C and D the task's C.
    const std::uint32_t align[4] = {pointer_alignment(ops.B), pointer_alignment(ops.A), pointer_alignment(ops.C),
                                    pointer_alignment(ops.C)};
    const cublasLtMatmulPreferenceAttributes_t align_attr[4] = {
        CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
        CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES};
    for (int i = 0; i < 4; ++i)
      TESSERA_CUBLAS_CHECK(
          cublasLtMatmulPreferenceSetAttribute(pref.get(), align_attr[i], &align[i], sizeof(align[i])));
    alignment = fmt::format("{}/{}/{}", align[0], align[1], align[2]);

    const int want = std::max(1, opt.autotune_max_algos);
    std::vector<cublasLtMatmulHeuristicResult_t> results(static_cast<std::size_t>(want));
    int got = 0;
    const cublasStatus_t st = cublasLtMatmulAlgoGetHeuristic(lt.get(), desc.get(), a_desc.get(), b_desc.get(),
                                                             c_desc.get(), c_desc.get(), pref.get(), want,
                                                             results.data(), &got);
    if (st != CUBLAS_STATUS_SUCCESS) {
      lt_error = fmt::format("cublasLtMatmulAlgoGetHeuristic: {}", cublasGetStatusString(st));
      return;
    }
    for (int i = 0; i < got; ++i) {
      const auto& r = results[std::size_t(i)];
      if (r.state == CUBLAS_STATUS_SUCCESS && r.workspaceSize <= opt.workspace_bytes) heuristics.push_back(r);
    }
    if (heuristics.empty()) lt_error = "cuBLASLt heuristic returned no usable algorithm for this problem";
  }

  void build_list() {
    list.clear();
    for (Layout l : {Layout::TN, Layout::NN}) {
      Baseline b;
      b.name = l == Layout::TN ? kCublasTN : kCublasNN;
      if (has_epilogue()) {
        b.error = kNoFusedEpilogue;
      } else {
        b.algo = l == ops.layout ? "cublasGemmEx default" : "cublasGemmEx default (B copied into this layout)";
        b.launch = gemm_ex_launch(l);
      }
      list.push_back(std::move(b));
    }
    Baseline h;
    h.name = kCublasLtHeuristic;
    if (!lt_error.empty()) {
      h.error = lt_error;
    } else {
      h.algo = "heuristic #0: " + detail::describe_algo(heuristics[0].algo, heuristics[0].workspaceSize);
      h.launch = lt_launch(heuristics[0].algo);
    }
    list.push_back(std::move(h));
    Baseline a;
    a.name = kCublasLtAutotuned;
    a.error = lt_error.empty() ? "not prepared (BaselineSuite::prepare was not called)" : lt_error;
    list.push_back(std::move(a));
  }

  CacheKey make_key() const {
    int dev = 0;
    TESSERA_CUDA_CHECK(cudaGetDevice(&dev));
    cudaDeviceProp p{};
    TESSERA_CUDA_CHECK(cudaGetDeviceProperties(&p, dev));
    CacheKey k;
    k.gpu_name = p.name;
    k.gpu_uuid = device_uuid_hex(p);
    k.task_id = task.id();
    k.cublaslt_version = cublasLtGetVersion();
    k.workspace_bytes = opt.workspace_bytes;
    k.max_algos = std::max(1, opt.autotune_max_algos);
    k.alignment = alignment;
    return k;
  }

  // The cached algorithm, if it is still valid for this library, device and problem.
  std::optional<cublasLtMatmulAlgo_t> cached_algo() const {
    if (!entry) return std::nullopt;
    cublasLtMatmulAlgo_t algo{};
    std::copy(entry->algo_words.begin(), entry->algo_words.end(), algo.data);
    cublasLtMatmulHeuristicResult_t check{};
    const cublasStatus_t st = cublasLtMatmulAlgoCheck(lt.get(), desc.get(), a_desc.get(), b_desc.get(), c_desc.get(),
                                                      c_desc.get(), &algo, &check);
    if (st != CUBLAS_STATUS_SUCCESS || check.workspaceSize > opt.workspace_bytes) {
      spdlog::info("cached cuBLASLt algorithm for {} no longer valid; re-autotuning", task.id());
      return std::nullopt;
    }
    return algo;
  }

  Baseline& autotuned() { return list.back(); }

  // Two rounds, each timing its algorithms interleaved (A B C A B C ...), so
  // that a clock or power drift during the autotune weighs on all of them
  // alike: timed one after another, the first algorithms ran on a cool GPU
  // and the choice could go to the one timed first. A bench record at
  // 8192x8192x1024 kept heuristic #0 (200 us) where other processes chose #7
  // (178 us). Round one times every algorithm under the autotune's loose rule;
  // round two re-times its fastest kAutotuneFinalists under the measurement's
  // own rule, and the winner is round two's fastest.
  void autotune(worker::Timer& timer) {
    const worker::TimingOptions full = timer.options();
    TimerOptionsGuard guard(timer);
    nlohmann::json tried = nlohmann::json::array();
    std::vector<std::size_t> runnable;  // indices into heuristics
    std::vector<worker::LaunchFn> launches;
    for (std::size_t i = 0; i < heuristics.size(); ++i) {
      const auto& r = heuristics[i];
      tried.push_back({{"index", i}, {"algo", detail::describe_algo(r.algo, r.workspaceSize)}});
      worker::LaunchFn launch = lt_launch(r.algo);
      try {
        launch(stream);  // a failing algorithm is skipped, not timed
        TESSERA_CUDA_CHECK(cudaStreamSynchronize(stream));
        runnable.push_back(i);
        launches.push_back(std::move(launch));
      } catch (const std::exception& e) {  // cuBLAS refused it
        tried.back()["error"] = e.what();
      }
    }
    // Times `which` (positions in runnable) interleaved; round one writes each
    // row's median_us and status, round two its final_us. The measured ones,
    // fastest first, as (median, position).
    const auto timed = [&](const std::vector<std::size_t>& which, const worker::TimingOptions& o, bool final_round) {
      std::vector<worker::LaunchFn> fns;
      for (std::size_t w : which) fns.push_back(launches[w]);
      timer.set_options(o);
      std::vector<TimingStats> stats;
      try {
        stats = timer.cold_interleaved(fns);
      } catch (const std::exception& e) {  // the timer could not measure them
        if (final_round) report["final_error"] = e.what();
        else
          for (std::size_t w : which) tried[runnable[w]]["error"] = e.what();
        return std::vector<std::pair<double, std::size_t>>{};
      }
      std::vector<std::pair<double, std::size_t>> ok;  // (median, position in runnable)
      for (std::size_t j = 0; j < which.size(); ++j) {
        auto& row = tried[runnable[which[j]]];
        row[final_round ? "final_us" : "median_us"] = stats[j].median_us;
        // The SM clock of each round: at 8192x8192x1024 on an H200 round two
        // ran at 1.71 GHz where round one and the measurement after it ran at
        // 1.98, and measured its finalists 7-14% slower, in the same order.
        row[final_round ? "final_sm_clock_ghz" : "sm_clock_ghz"] = stats[j].sm_clock_ghz;
        if (!final_round) row["status"] = stats[j].status;
        if (stats[j].status == "measured" && stats[j].median_us > 0) ok.emplace_back(stats[j].median_us, which[j]);
      }
      std::sort(ok.begin(), ok.end());
      return ok;
    };
    std::vector<std::size_t> all(runnable.size());
    std::iota(all.begin(), all.end(), std::size_t{0});
    worker::TimingOptions loose = autotune_options(full);
    loose.timeout_ms *= double(std::max<std::size_t>(1, all.size()));  // the loose rule's budget is per algorithm
    const auto first = all.empty() ? std::vector<std::pair<double, std::size_t>>{} : timed(all, loose, false);
    std::vector<std::size_t> finalists;
    for (const auto& [us, w] : first)
      if (finalists.size() < kAutotuneFinalists) finalists.push_back(w);
    auto decisive = finalists.size() > 1 ? timed(finalists, full, true) : first;
    if (decisive.empty()) decisive = first;  // round two measured none: round one decides
    int best = -1;
    double best_us = 0;
    if (!decisive.empty()) {
      best = int(runnable[decisive.front().second]);
      best_us = decisive.front().first;
    }
    report["tried"] = tried;
    if (best < 0) {
      autotuned().error = "autotuning measured no algorithm";
      return;
    }
    const auto& win = heuristics[std::size_t(best)];
    autotuned().algo = fmt::format("best of {} (heuristic #{}): {}", heuristics.size(), best,
                                   detail::describe_algo(win.algo, win.workspaceSize));
    autotuned().launch = lt_launch(win.algo);
    autotuned().error.clear();
    report["chosen"] = best;
    report["median_us"] = best_us;
    AutotuneEntry e;
    std::copy(std::begin(win.algo.data), std::end(win.algo.data), e.algo_words.begin());
    e.algo_desc = autotuned().algo;
    e.median_us = best_us;
    e.algos_tried = int(heuristics.size());
    e.tuned_at = utc_now_iso();
    entry = e;
    if (!profiler.empty()) {
      spdlog::warn("cuBLASLt autotune for {} ran under a profiler ({}): its choice serves this run and is not cached",
                   task.id(), profiler);
      report["not_cached"] = "autotuned under a profiler";
    } else if (cache) {
      cache->store(key, e);
    }
  }
};

BaselineSuite::BaselineSuite(const Task& task, const GemmOperands& ops, cudaStream_t stream, SuiteOptions options)
    : impl_(std::make_unique<Impl>()) {
  validate(task);
  TESSERA_REQUIRE(ops.M == task.m && ops.N == task.n && ops.K == task.k && ops.layout == task.layout &&
                      ops.epilogue == task.epilogue,
                  "GemmOperands do not describe the task");
  TESSERA_REQUIRE(ops.A && ops.B && ops.C, "GemmOperands without A, B or C");
  auto& s = *impl_;
  s.task = task;
  s.ops = ops;
  s.stream = stream;
  s.opt = std::move(options);
  s.setup_cublas();
  s.setup_lt();
  s.build_list();
}

BaselineSuite::~BaselineSuite() = default;

void BaselineSuite::prepare(worker::Timer& timer) {
  auto& s = *impl_;
  s.report = {{"from_cache", false}, {"tried", nlohmann::json::array()}};
  if (!s.lt_error.empty()) return;
  s.key = s.make_key();
  s.profiler = attached_profiler();
  if (s.opt.use_cache) {
    s.cache.emplace(s.opt.cache_dir.empty() ? cache_dir() / "baselines" : s.opt.cache_dir);
    if (!s.opt.remeasure) s.entry = s.cache->load(s.key);
    if (s.entry) s.previous_times = s.entry->last_times_us;
  }
  if (auto algo = s.cached_algo()) {
    s.autotuned().algo = s.entry->algo_desc + " [cached]";
    s.autotuned().launch = s.lt_launch(*algo);
    s.autotuned().error.clear();
    s.report["from_cache"] = true;
    s.report["cached_median_us"] = s.entry->median_us;
    s.report["tuned_at"] = s.entry->tuned_at;
    return;
  }
  s.entry.reset();
  s.autotune(timer);
}

const std::vector<Baseline>& BaselineSuite::baselines() const { return impl_->list; }

const Baseline* BaselineSuite::find(const std::string& name) const {
  for (const auto& b : impl_->list)
    if (b.name == name) return &b;
  return nullptr;
}

void BaselineSuite::refresh_inputs() {
  if (impl_->b_other.get()) impl_->transpose_b();
}

const nlohmann::json& BaselineSuite::autotune_report() const { return impl_->report; }

nlohmann::json BaselineSuite::previous_times_us() const { return impl_->previous_times; }

std::vector<AutotuneTrial> autotune_trials(const nlohmann::json& report) {
  std::vector<AutotuneTrial> out;
  const auto tried = report.is_object() ? report.find("tried") : report.end();
  if (!report.is_object() || tried == report.end() || !tried->is_array()) return out;
  for (const auto& row : *tried) {
    AutotuneTrial t;
    t.index = int(integer_or(row, "index", 0));
    if (const std::string error = string_or(row, "error", ""); !error.empty()) {
      t.error = error;
    } else if (const std::string status = string_or(row, "status", ""); status != "measured") {
      t.error = fmt::format("not measured ({})", status.empty() ? "no status" : status);
    } else {
      t.median_us = number_or(row, "median_us", 0.0);
      t.final_us = number_or(row, "final_us", 0.0);
    }
    out.push_back(std::move(t));
  }
  return out;
}

void BaselineSuite::describe_autotune(std::vector<BaselineResult>& results) const {
  for (auto& r : results)
    if (r.name == kCublasLtAutotuned) r.autotune = autotune_trials(impl_->report);
}

void BaselineSuite::record_times(const std::vector<BaselineResult>& results) {
  auto& s = *impl_;
  if (!s.cache || !s.entry || !s.profiler.empty()) return;
  nlohmann::json times = nlohmann::json::object();
  for (const auto& r : results)
    if (r.error.empty() && r.cold.status == "measured") times[r.name] = r.cold.median_us;
  s.entry->last_times_us = times;
  s.cache->store(s.key, *s.entry);
}

}  // namespace tessera::baselines
