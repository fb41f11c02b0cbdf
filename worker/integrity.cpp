#include "worker/integrity.hpp"

#include <fmt/format.h>

#include "worker/check.hpp"
#include "worker/integrity_kernels.hpp"
#include "worker/verify.hpp"
#include "worker/verify_kernels.hpp"

namespace tessera::worker {

namespace {


}  // namespace

CandidateGuards::CandidateGuards(TaskBuffers& b, GuardedBuffer& workspace, cudaStream_t s, std::uint64_t seed)
    : b_(b), ws_(workspace), s_(s), rng_(seed) {
  cold_.prepare = [this](cudaStream_t st) { prepare(st); };
  cold_.check = [this](cudaStream_t st) { check(static_cast<const __half*>(b_.C.data()), st); };
  cold_.begin_batch = [this](cudaStream_t st) { begin(st); };
  cold_.verdict = [this] { return verdict(); };
}

void CandidateGuards::fresh_inputs(cudaStream_t s) {
  // All of A and B: refreshing part of them would let a kernel update an
  // earlier answer for the changed part only (a rank-r or row update),
  // cheaper than the GEMM and exact.
  const std::uint64_t seed = rng_();
  harness_fresh(static_cast<__half*>(b_.A.data()), b_.A_copy.as<__half>(), b_.A.bytes() / 2, seed ^ 0xA, s);
  harness_fresh(static_cast<__half*>(b_.B.data()), b_.B_copy.as<__half>(), b_.B.bytes() / 2, seed ^ 0xB, s);
}

void CandidateGuards::prepare(cudaStream_t s) {
  // The output the call must write becomes poison, the workspace starts from
  // zero as the ABI promises, and the inputs are new: no earlier output (the
  // candidate's or a baseline's) is this call's answer.
  harness_poison(static_cast<__half*>(b_.C.data()), b_.c_count(), s);
  harness_zero(ws_.data(), ws_.bytes(), s);
  fresh_inputs(s);
}

void CandidateGuards::check(const __half* out, cudaStream_t s) {
  compute_reference(b_, b_.A_copy.as<const __half>(), b_.B_copy.as<const __half>(), s);
  harness_check(b_.check_args(out), b_.verdict.as<CompareStats>(), s);
  ++checks_;
  ++checks_total_;
}

void CandidateGuards::begin(cudaStream_t s) {
  harness_zero(b_.verdict.get(), sizeof(CompareStats), s);
  checks_ = 0;
}

std::string CandidateGuards::verdict() {
  if (checks_ == 0) return {};
  CompareStats cs{};
  TESSERA_CUDA_CHECK(cudaMemcpy(&cs, b_.verdict.get(), sizeof cs, cudaMemcpyDeviceToHost));
  const double compared = double(checks_) * double(b_.c_count());
  const double flip_fraction = compared > 0 ? double(cs.decided_flips) / compared : 0;
  const double rel_l2 = relative_l2(cs);
  const double rel_bound = rel_l2_bound(b_.task.k);
  if (cs.mismatches == 0 && flip_fraction <= kMaxFlipFraction && rel_l2 <= rel_bound) return {};
  if (cs.unwritten > 0)
    return fmt::format("{} output elements of checked timed calls were never written: the kernel skipped work while "
                       "it was timed (it passed verification)", cs.unwritten);
  if (cs.mismatches > 0)
    return fmt::format("{} output elements of checked timed calls were wrong (max abs err {:.3g}): the kernel's "
                       "timed calls did not compute what its verified calls did", cs.mismatches, cs.max_abs_err);
  if (rel_l2 > rel_bound)
    return fmt::format("checked timed calls have a relative L2 error of {:.3g}, above the bound {:.3g} for K = {}: "
                       "the timed calls lost precision", rel_l2, rel_bound, b_.task.k);
  return fmt::format("{:.0f}% of the outputs of checked timed calls round differently from the reference where "
                     "fp32 accumulation could not (at most {:.0f}% may): the timed calls lost precision",
                     100 * flip_fraction, 100 * kMaxFlipFraction);
}

HotGuard CandidateGuards::hot(std::function<void(int, cudaStream_t)> launch_into, int buffers) {
  rotation_armed_ = true;  // TaskBuffers::ensure_rotation armed them for this evaluation
  HotGuard g;
  g.buffers = buffers;
  g.launch_into = std::move(launch_into);
  g.prepare = [this, buffers](cudaStream_t s) {
    for (int i = 0; i < buffers; ++i)
      harness_poison(static_cast<__half*>(b_.rotation.at(i).data()), b_.c_count(), s);
    harness_zero(ws_.data(), ws_.bytes(), s);
    fresh_inputs(s);
  };
  g.check = [this](int i, cudaStream_t s) { check(static_cast<const __half*>(b_.rotation.at(i).data()), s); };
  g.begin = [this](cudaStream_t s) { begin(s); };
  g.verdict = [this] { return verdict(); };
  return g;
}

Damage CandidateGuards::audit() {
  auto* sc = b_.scratch.as<unsigned long long>();
  auto digest_of = [&](const void* p, std::size_t bytes) {
    unsigned long long v = 0;
    digest(p, bytes, sc, s_);
    TESSERA_CUDA_CHECK(cudaMemcpyAsync(&v, sc, sizeof v, cudaMemcpyDeviceToHost, s_));
    TESSERA_CUDA_CHECK(cudaStreamSynchronize(s_));
    return v;
  };
  if (digest_of(b_.A.data(), b_.A.bytes()) != digest_of(b_.A_copy.get(), b_.A.bytes()) ||
      digest_of(b_.B.data(), b_.B.bytes()) != digest_of(b_.B_copy.get(), b_.B.bytes()))
    return {Damage::Kind::inputs, "the candidate modified its inputs while it was timed"};
  std::string damage = b_.describe_canaries(s_, /*with_rotation=*/rotation_armed_);
  if (ws_.bytes() > 0)
    if (auto n = ws_.damaged_canaries(sc, s_); n > 0)
      damage += fmt::format("{}{} canary bytes around the workspace overwritten", damage.empty() ? "" : "; ", n);
  if (damage.empty()) return {};
  return {Damage::Kind::canaries, damage + " while it was timed"};
}

}  // namespace tessera::worker
