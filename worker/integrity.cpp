#include "worker/integrity.hpp"

#include <fmt/format.h>

#include "worker/check.hpp"
#include "worker/integrity_kernels.hpp"
#include "worker/verify.hpp"
#include "worker/verify_kernels.hpp"

namespace tessera::worker {

namespace {

// The digest of `bytes` at p, read back (synchronises s).
unsigned long long digest_now(const void* p, std::size_t bytes, unsigned long long* scratch, cudaStream_t s) {
  unsigned long long v = 0;
  digest(p, bytes, scratch, s);
  TESSERA_CUDA_CHECK(cudaMemcpyAsync(&v, scratch, sizeof v, cudaMemcpyDeviceToHost, s));
  TESSERA_CUDA_CHECK(cudaStreamSynchronize(s));
  return v;
}

}  // namespace

CandidateGuards::CandidateGuards(TaskBuffers& b, GuardedBuffer& workspace, cudaStream_t s, std::uint64_t seed)
    : b_(b), ws_(workspace), s_(s), rng_(seed) {
  cold_.prepare = [this](cudaStream_t st) { prepare(st); };
  cold_.check = [this](cudaStream_t st) { check(static_cast<const __half*>(b_.C.data()), st); };
  cold_.begin_batch = [this](cudaStream_t st) { begin(st); };
  cold_.verdict = [this] { return verdict(); };
}

void CandidateGuards::fresh_inputs(cudaStream_t s) { fresh_set(0, rng_(), s); }

void CandidateGuards::fresh_set(int set, std::uint64_t seed, cudaStream_t s) {
  // All of A and B: refreshing part of them would let a kernel update an
  // earlier answer for the changed part only (a rank-r or row update),
  // cheaper than the GEMM and exact. Set 0 (A and B) has hidden copies the
  // reference reads; another set's copy is written from its seed when one of
  // its calls is checked.
  const bool first = set == 0;
  if (first) set0_seed_ = seed;
  harness_fresh(b_.hot_a(set), first ? b_.A_copy.as<__half>() : nullptr, b_.A.bytes() / 2, seed ^ 0xA, s);
  harness_fresh(b_.hot_b(set), first ? b_.B_copy.as<__half>() : nullptr, b_.B.bytes() / 2, seed ^ 0xB, s);
}

void CandidateGuards::copies_from(std::uint64_t seed, cudaStream_t s) {
  harness_fresh(nullptr, b_.A_copy.as<__half>(), b_.A.bytes() / 2, seed ^ 0xA, s);
  harness_fresh(nullptr, b_.B_copy.as<__half>(), b_.B.bytes() / 2, seed ^ 0xB, s);
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

HotGuard CandidateGuards::hot(GemmCallable& callable, const TesseraGemmParams& params, int wanted) {
  const int calls = b_.ensure_hot_sets(wanted, s_);
  rotation_armed_ = true;  // ensure_hot_sets armed them for this evaluation
  hot_params_.assign(static_cast<std::size_t>(calls), params);
  hot_seeds_.assign(static_cast<std::size_t>(calls), 0);
  for (int i = 0; i < calls; ++i) {
    TesseraGemmParams& p = hot_params_[static_cast<std::size_t>(i)];
    p.A = b_.hot_a(i);
    p.B = b_.hot_b(i);
    p.C = static_cast<__half*>(b_.rotation.at(static_cast<std::size_t>(i)).data());
    callable.prepare_params(p);  // tensor maps over this block's buffers; a translation unit's capture
  }
  HotGuard g;
  g.calls = calls;
  g.launch_into = [this, &callable](int i, cudaStream_t s) { callable.launch(hot_params_.at(std::size_t(i)), s); };
  g.prepare = [this](cudaStream_t s) {
    for (std::size_t i = 0; i < hot_params_.size(); ++i) harness_poison(hot_params_[i].C, b_.c_count(), s);
    harness_zero(ws_.data(), ws_.bytes(), s);
    for (std::size_t i = 0; i < hot_seeds_.size(); ++i) {
      hot_seeds_[i] = rng_();
      fresh_set(static_cast<int>(i), hot_seeds_[i], s);
    }
  };
  g.check = [this](int i, cudaStream_t s) { check_hot(i, s); };
  g.begin = [this](cudaStream_t s) { begin(s); };
  g.verdict = [this] { return verdict(); };
  return g;
}

void CandidateGuards::check_hot(int call, cudaStream_t s) {
  // The reference of call i's own inputs: set 0's copies are current; another
  // set's are written from its seed, then set 0's again, so the copies
  // mirror A and B for the phases after hot timing and the final audit.
  if (call != 0) copies_from(hot_seeds_.at(std::size_t(call)), s);
  check(hot_params_.at(std::size_t(call)).C, s);
  if (call != 0) copies_from(set0_seed_, s);
}

std::string CandidateGuards::audit_hot_inputs() {
  // The other input sets of hot timing, against copies written from their
  // seeds of the last replay (nothing after hot timing writes them); then the
  // copies mirror A and B again.
  auto* sc = b_.scratch.as<unsigned long long>();
  auto same = [&](const void* live, const void* copy, std::size_t bytes) {
    return digest_now(live, bytes, sc, s_) == digest_now(copy, bytes, sc, s_);
  };
  std::string changed;
  for (std::size_t i = 1; i < hot_seeds_.size() && changed.empty(); ++i) {
    copies_from(hot_seeds_[i], s_);
    if (!same(b_.hot_a(int(i)), b_.A_copy.get(), b_.A.bytes()) || !same(b_.hot_b(int(i)), b_.B_copy.get(), b_.B.bytes()))
      changed = fmt::format("the candidate modified its inputs while it was timed (hot input set {})", i);
  }
  if (hot_seeds_.size() > 1) copies_from(set0_seed_, s_);
  return changed;
}

Damage CandidateGuards::audit() {
  auto* sc = b_.scratch.as<unsigned long long>();
  auto digest_of = [&](const void* p, std::size_t bytes) { return digest_now(p, bytes, sc, s_); };
  if (digest_of(b_.A.data(), b_.A.bytes()) != digest_of(b_.A_copy.get(), b_.A.bytes()) ||
      digest_of(b_.B.data(), b_.B.bytes()) != digest_of(b_.B_copy.get(), b_.B.bytes()))
    return {Damage::Kind::inputs, "the candidate modified its inputs while it was timed"};
  if (auto changed = audit_hot_inputs(); !changed.empty()) return {Damage::Kind::inputs, changed};
  std::string damage = b_.describe_canaries(s_, /*with_rotation=*/rotation_armed_);
  if (ws_.bytes() > 0)
    if (auto n = ws_.damaged_canaries(sc, s_); n > 0)
      damage += fmt::format("{}{} canary bytes around the workspace overwritten", damage.empty() ? "" : "; ", n);
  if (damage.empty()) return {};
  return {Damage::Kind::canaries, damage + " while it was timed"};
}

}  // namespace tessera::worker
