// The determinism check of verification (docs/harness.md, "Verification"):
// the last trial's inputs run a second time with the output and the shared
// memory poisoned with other patterns, so a kernel that reads memory it never
// wrote, or races between warps, gives another answer.
#include <fmt/format.h>

#include "worker/check.hpp"
#include "worker/integrity_kernels.hpp"
#include "worker/verify.hpp"
#include "worker/verify_kernels.hpp"

namespace tessera::worker {

std::string to_string(Determinism d) {
  switch (d) {
    case Determinism::bit_exact: return "bit_exact";
    case Determinism::within_tolerance: return "within_tolerance";
    case Determinism::off: return "off";
  }
  return "unknown";
}

Determinism determinism_required(const nlohmann::json& contract, unsigned long long workspace_bytes) {
  if (workspace_bytes > 0) return Determinism::within_tolerance;
  if (contract.is_object() && contract.contains("split_k") && contract.at("split_k").is_number_integer() &&
      contract.at("split_k").get<long long>() > 1)
    return Determinism::within_tolerance;
  return Determinism::bit_exact;
}

std::string determinism_failure(Determinism d, bool identical, const TrialStats& repeat) {
  if (d == Determinism::off || identical) return {};
  const std::string figures =
      fmt::format("{} of its elements outside tolerance, {} NaN or unwritten, max abs err {:.3g}", repeat.mismatches,
                  repeat.nonfinite + repeat.unwritten, repeat.max_abs_err);
  if (d == Determinism::bit_exact)
    return fmt::format(
        "the output differs between two runs on the same inputs (the second with its output and shared memory "
        "poisoned with other patterns; {}): the kernel reads memory it never wrote (uninitialised shared memory) or "
        "races between warps. Only a kernel that declares split-K or stream-K partial sums (split_k > 1, or a "
        "workspace) may differ, and then within tolerance",
        figures);
  if (repeat.passed) return {};
  return fmt::format(
      "the second of two runs on the same inputs is outside tolerance (its output and shared memory poisoned with "
      "other patterns; {}): its partial sums may meet in any order, but it also reads memory it never wrote or "
      "races between warps",
      figures);
}

void check_determinism(VerifyContext& ctx, unsigned long long first_output, const InputDigests& inputs,
                       VerifyStats& v) {
  TaskBuffers& b = ctx.buffers;
  cudaStream_t s = ctx.stream;
  auto* sc = b.scratch.as<unsigned long long>();
  if (ctx.heartbeat) ctx.heartbeat("verify repeat");
  // A workspace the first run left dirty is reported as such after
  // verification; a second run on it would only be blamed on nondeterminism.
  if (ctx.params.workspace_bytes > 0) {
    unsigned long long dirty = 0;
    count_not_equal(ctx.params.workspace, ctx.params.workspace_bytes, 0, sc, s);
    TESSERA_CUDA_CHECK(cudaMemcpyAsync(&dirty, sc, sizeof dirty, cudaMemcpyDeviceToHost, s));  // s is non-blocking
    TESSERA_CUDA_CHECK(cudaStreamSynchronize(s));
    if (dirty) return;
  }
  fill_half_bits(static_cast<__half*>(b.C.data()), b.c_count(), kPoisonBitsSecond, s);
  harness_fill_shared(kSharedPatternSecond, s);

  run_once(ctx);

  TrialStats t = check_output(b, s, "repeat");
  const bool identical = read_digest(b.C, sc, s) == first_output;
  v.repeat = t;
  if (read_digest(b.A, sc, s) != inputs.a || read_digest(b.B, sc, s) != inputs.b ||
      read_digest(b.bias, sc, s) != inputs.bias) {
    v.inputs_intact = false;
    v.status = "failed";
    if (v.failure.empty()) v.failure = "the candidate modified its inputs (in the second run on the same inputs)";
    return;
  }
  if (auto damage = b.describe_canaries(s); !damage.empty()) {
    v.canaries_intact = false;
    v.status = "failed";
    if (v.failure.empty()) v.failure = damage + " (in the second run on the same inputs)";
    return;
  }
  const std::string why = determinism_failure(ctx.determinism, identical, t);
  v.determinism = !why.empty() ? "differs" : identical ? "identical" : "within_tolerance";
  v.repeat.passed = why.empty();
  if (why.empty()) return;
  v.status = "failed";
  if (v.failure.empty()) v.failure = why;
}

}  // namespace tessera::worker
