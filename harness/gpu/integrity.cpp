#include "harness/gpu/integrity.hpp"

#include <fmt/format.h>

#include "harness/gpu/check.hpp"
#include "harness/gpu/integrity_kernels.hpp"
#include "harness/gpu/verify.hpp"
#include "harness/gpu/verify_kernels.hpp"

namespace tessera::gpu {

namespace {

// Fresh inputs drawn once during the timing come from this distribution, as
// the last verification trial's (timing never runs on zeros or constants).
constexpr Distribution kRefreshDistribution = Distribution::uniform_sym;

// Never 0: 0 means "not varied", and a call must not be able to tell
// checked calls from others by their inputs.
std::uint64_t nonzero(std::uint64_t x) { return x ? x : 0x9E3779B97F4A7C15ULL; }

}  // namespace

CandidateGuards::CandidateGuards(TaskBuffers& b, GuardedBuffer& workspace, cudaStream_t s, std::uint64_t seed)
    : b_(b), ws_(workspace), s_(s), rng_(seed) {
  take_digests();
  cold_.prepare = [this](cudaStream_t st) { prepare(st); };
  cold_.check = [this](cudaStream_t st) { check(static_cast<const __half*>(b_.C.data()), st); };
  cold_.begin_batch = [this](cudaStream_t st) { begin(st); };
  cold_.verdict = [this] { return verdict(); };
  cold_.refresh = [this](cudaStream_t st) { refresh(st); };
  plain_ = cold_;
  plain_.refresh = nullptr;
}

void CandidateGuards::take_digests() {
  auto* sc = b_.scratch.as<unsigned long long>();
  digest_a_ = read_digest(b_.A, sc, s_);
  digest_b_ = read_digest(b_.B, sc, s_);
  digest_bias_ = read_digest(b_.bias, sc, s_);
}

void CandidateGuards::prepare(cudaStream_t s) {
  // The output the call must write, and the baselines' output (which holds
  // the right answer for the last inputs a baseline saw), become poison; the
  // workspace starts from zero as the ABI promises; the inputs get new signs,
  // so an answer remembered from an earlier call is wrong for this one.
  harness_poison(static_cast<__half*>(b_.C.data()), b_.c_count(), s);
  harness_poison(static_cast<__half*>(b_.C_baseline.data()), b_.c_count(), s);
  harness_zero(ws_.data(), ws_.bytes(), s);
  b_.vary_inputs(nonzero(rng_()), nonzero(rng_()), s);
}

void CandidateGuards::check(const __half* out, cudaStream_t s) {
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
  const double flip_fraction = compared > 0 ? double(cs.flips) / compared : 0;
  if (cs.mismatches == 0 && flip_fraction <= kMaxFlipFraction) return {};
  if (cs.unwritten > 0)
    return fmt::format("{} output elements of checked timed calls were never written: the kernel skipped work while "
                       "it was timed (it passed verification)", cs.unwritten);
  if (cs.mismatches > 0)
    return fmt::format("{} output elements of checked timed calls were wrong (max abs err {:.3g}): the kernel's "
                       "timed calls did not compute what its verified calls did", cs.mismatches, cs.max_abs_err);
  return fmt::format("{:.0f}% of the outputs of checked timed calls differ from the rounded reference (at most "
                     "{:.0f}% may): the timed calls lost precision", 100 * flip_fraction, 100 * kMaxFlipFraction);
}

void CandidateGuards::refresh(cudaStream_t s) {
  const std::uint64_t seed = rng_();
  fill_random(static_cast<__half*>(b_.A.data()), b_.A.bytes() / 2, kRefreshDistribution, seed ^ 0xA, s);
  fill_random(static_cast<__half*>(b_.B.data()), b_.B.bytes() / 2, kRefreshDistribution, seed ^ 0xB, s);
  b_.seed_a = b_.seed_b = 0;
  compute_reference(b_, s);
  TESSERA_CUDA_CHECK(cudaStreamSynchronize(s));
  take_digests();
}

HotGuard CandidateGuards::hot(std::function<void(int, cudaStream_t)> launch_into, int buffers) {
  HotGuard g;
  g.buffers = buffers;
  g.launch_into = std::move(launch_into);
  g.prepare = [this, buffers](cudaStream_t s) {
    for (int i = 0; i < buffers; ++i)
      harness_poison(static_cast<__half*>(b_.rotation.at(i).data()), b_.c_count(), s);
    harness_poison(static_cast<__half*>(b_.C_baseline.data()), b_.c_count(), s);
    harness_zero(ws_.data(), ws_.bytes(), s);
  };
  g.check = [this](int i, cudaStream_t s) { check(static_cast<const __half*>(b_.rotation.at(i).data()), s); };
  g.begin = [this](cudaStream_t s) { begin(s); };
  g.verdict = [this] { return verdict(); };
  return g;
}

std::string CandidateGuards::audit() {
  b_.vary_inputs(0, 0, s_);
  auto* sc = b_.scratch.as<unsigned long long>();
  std::string out;
  if (read_digest(b_.A, sc, s_) != digest_a_ || read_digest(b_.B, sc, s_) != digest_b_ ||
      read_digest(b_.bias, sc, s_) != digest_bias_)
    out = "the candidate modified its inputs while it was timed";
  std::string damage = b_.describe_canaries(s_);
  if (ws_.bytes() > 0)
    if (auto n = ws_.damaged_canaries(sc, s_); n > 0)
      damage += fmt::format("{}{} canary bytes around the workspace overwritten", damage.empty() ? "" : "; ", n);
  if (!damage.empty()) out += (out.empty() ? "" : "; ") + damage + " while it was timed";
  return out;
}

}  // namespace tessera::gpu
