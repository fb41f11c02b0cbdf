#include "worker/verify.hpp"

#include <cmath>
#include <vector>

#include <fmt/format.h>

#include "worker/check.hpp"
#include "worker/integrity_kernels.hpp"
#include "worker/verify_kernels.hpp"

namespace tessera::worker {

double accumulation_gamma(std::int64_t k) {
  const double steps = std::ceil(double(k) / 16.0);
  return kGammaSafety * steps * std::ldexp(1.0, -24);
}

double rel_l2_bound(std::int64_t k) { return std::ldexp(1.0, -10) + accumulation_gamma(k) / 4.0; }

double relative_l2(const CompareStats& cs) {
  return cs.sum_sq_ref > 0 ? std::sqrt(cs.sum_sq_err / cs.sum_sq_ref) : std::sqrt(cs.sum_sq_err);
}

void run_once(VerifyContext& ctx) {
  ctx.callable.launch(ctx.params, ctx.stream);
  cudaError_t e = cudaDeviceSynchronize();
  if (e == cudaSuccess) e = cudaGetLastError();
  if (e != cudaSuccess) throw classify_cuda_error(e, "while the candidate ran");
}

unsigned long long read_digest(const GuardedBuffer& buf, unsigned long long* scratch, cudaStream_t s) {
  unsigned long long v = 0;
  digest(buf.data(), buf.bytes(), scratch, s);
  TESSERA_CUDA_CHECK(cudaMemcpyAsync(&v, scratch, sizeof v, cudaMemcpyDeviceToHost, s));
  TESSERA_CUDA_CHECK(cudaStreamSynchronize(s));
  return v;
}

void compute_reference(TaskBuffers& b, cudaStream_t s) {
  compute_reference(b, static_cast<const __half*>(b.A.data()), static_cast<const __half*>(b.B.data()), s);
}

void compute_reference(TaskBuffers& b, const __half* A, const __half* B, cudaStream_t s) {
  reference_gemm(A, B, b.acc.as<double>(),
                 b.absacc.as<double>(), static_cast<int>(b.task.m), static_cast<int>(b.task.n),
                 static_cast<int>(b.task.k), b.task.layout == Layout::TN ? 0 : 1, s);
}

TrialStats check_output(TaskBuffers& b, cudaStream_t s, const std::string& label) {
  auto* stats_dev = reinterpret_cast<CompareStats*>(b.scratch.as<char>() + 1024);
  TESSERA_CUDA_CHECK(cudaMemsetAsync(stats_dev, 0, sizeof(CompareStats), s));
  harness_check(b.check_args(static_cast<const __half*>(b.C.data())), stats_dev, s);
  CompareStats cs{};
  TESSERA_CUDA_CHECK(cudaMemcpyAsync(&cs, stats_dev, sizeof cs, cudaMemcpyDeviceToHost, s));
  TESSERA_CUDA_CHECK(cudaStreamSynchronize(s));
  TrialStats t;
  t.distribution = label;
  t.max_abs_err = cs.max_abs_err;
  t.rel_l2_err = relative_l2(cs);
  t.mismatches = static_cast<long long>(cs.mismatches);
  t.unwritten = static_cast<long long>(cs.unwritten);
  t.nonfinite = static_cast<long long>(cs.nonfinite);
  t.flip_fraction = double(cs.flips) / double(b.c_count());
  t.decided_flip_fraction = double(cs.decided_flips) / double(b.c_count());
  // Integer data: fp32 sums (and + bias, ReLU) are exact, so the fp16 result
  // must be exactly round(ref). GELU's tanh is not exact in fp32: a correct
  // kernel may flip rounding ties there, as on any other data.
  const bool exact = label == "integer" && b.task.epilogue != Epilogue::bias_gelu;
  t.passed = cs.mismatches == 0 && t.rel_l2_err <= rel_l2_bound(b.task.k) &&
             (exact ? cs.flips == 0 : t.decided_flip_fraction <= kMaxFlipFraction);
  if (exact && t.mismatches == 0) t.mismatches = static_cast<long long>(cs.flips);
  return t;
}

VerifyStats verify_candidate(VerifyContext& ctx, int random_trials) {
  TaskBuffers& b = ctx.buffers;
  cudaStream_t s = ctx.stream;
  auto* sc = b.scratch.as<unsigned long long>();
  // Integer first (exactness), then positive data (fp16 accumulation shows),
  // then mixed magnitudes; uniform_sym last (its inputs are reused for timing).
  std::vector<Distribution> plan = {Distribution::integer};
  const Distribution cycle[] = {Distribution::uniform_pos, Distribution::mixed_scale, Distribution::uniform_sym};
  for (int i = 0; i < random_trials - 1; ++i) plan.push_back(cycle[i % 2]);
  plan.push_back(Distribution::uniform_sym);

  VerifyStats v;
  v.status = "passed";
  InputDigests last_inputs;
  for (std::size_t trial = 0; trial < plan.size(); ++trial) {
    const Distribution d = plan[trial];
    if (ctx.heartbeat) ctx.heartbeat(fmt::format("verify {}/{}", trial + 1, plan.size()));
    const std::uint64_t seed = ctx.seed * 0x9E3779B97F4A7C15ULL + trial;
    fill_random(static_cast<__half*>(b.A.data()), b.A.bytes() / 2, d, seed ^ 0xA, s);
    fill_random(static_cast<__half*>(b.B.data()), b.B.bytes() / 2, d, seed ^ 0xB, s);
    fill_random(static_cast<__half*>(b.bias.data()), b.bias.bytes() / 2, Distribution::uniform_sym, seed ^ 0xC, s);
    for (auto* g : {&b.A, &b.B, &b.C, &b.bias}) g->arm_canaries(s);
    fill_half_bits(static_cast<__half*>(b.C.data()), b.c_count(), kPoisonBits, s);
    const auto da = read_digest(b.A, sc, s), db = read_digest(b.B, sc, s), dbias = read_digest(b.bias, sc, s);
    // Shared memory zeroed right before every verified call: what a kernel
    // reads there without writing it is known, whatever ran before (another
    // candidate, a baseline), and the determinism check's second run differs
    // from the last trial's only in its patterns.
    if (ctx.determinism != Determinism::off) harness_fill_shared(kSharedPatternFirst, s);

    run_once(ctx);

    compute_reference(b, s);
    TrialStats t = check_output(b, s, distribution_name(d));
    if (read_digest(b.A, sc, s) != da || read_digest(b.B, sc, s) != db || read_digest(b.bias, sc, s) != dbias) {
      v.inputs_intact = false;
      t.passed = false;
    }
    if (auto damage = b.describe_canaries(s); !damage.empty()) {
      v.canaries_intact = false;
      t.passed = false;
      if (v.failure.empty()) v.failure = damage;
    }
    ++v.trials;
    v.trials_passed += t.passed;
    v.max_abs_err = std::max(v.max_abs_err, t.max_abs_err);
    v.rel_l2_err = std::max(v.rel_l2_err, t.rel_l2_err);
    v.mismatches += t.mismatches;
    if (!t.passed && v.failure.empty()) {
      if (!v.inputs_intact) v.failure = "the candidate modified its inputs";
      else if (t.unwritten > 0)
        v.failure = fmt::format("{} output elements never written ({} data)", t.unwritten, t.distribution);
      else if (t.nonfinite > 0) v.failure = fmt::format("{} NaN/Inf outputs ({} data)", t.nonfinite, t.distribution);
      else if (t.mismatches > 0)
        v.failure = fmt::format("{} elements outside tolerance on {} data (max abs err {:.3g}, rel L2 {:.3g})",
                                t.mismatches, t.distribution, t.max_abs_err, t.rel_l2_err);
      else if (t.rel_l2_err > rel_l2_bound(b.task.k))
        v.failure = fmt::format("relative L2 error {:.3g} on {} data, above the bound {:.3g} for K = {} (max abs "
                                "err {:.3g}): the accumulation lost precision",
                                t.rel_l2_err, t.distribution, rel_l2_bound(b.task.k), b.task.k, t.max_abs_err);
      else
        v.failure = fmt::format("{:.1f}% of the outputs on {} data round differently from the reference where "
                                "fp32 accumulation could not (at most {:.0f}% may; max abs err {:.3g})",
                                100 * t.decided_flip_fraction, t.distribution, 100 * kMaxFlipFraction,
                                t.max_abs_err);
    }
    v.per_trial.push_back(t);
    last_inputs = {da, db, dbias};  // the last trial's are the determinism check's
  }
  if (v.trials_passed != v.trials) v.status = "failed";
  else if (ctx.determinism != Determinism::off) check_determinism(ctx, read_digest(b.C, sc, s), last_inputs, v);
  return v;
}

}  // namespace tessera::worker
