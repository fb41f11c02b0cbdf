#pragma once
// The verification protocol (docs/harness.md, "Verification") for one loaded candidate.
#include <cstdint>
#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "core/result.hpp"
#include "worker/candidate_runtime.hpp"
#include "worker/task_buffers.hpp"

namespace tessera::worker {

// Accumulation tolerance: fp32 accumulation over K loses at most a few units
// of 2^-24 per accumulation step (16-wide MMA steps), relative to Σ|a·b|;
// fp16 accumulation loses 2^-11 per step and fails this by orders of magnitude.
inline constexpr double kGammaSafety = 8.0;
// Elements whose fp16 result is not round(ref) although ref ± the allowance
// round alike. Counting every flip instead failed correct fp32 kernels at long
// K: past K ~ 16k the allowance on positive sums exceeds an fp16 ulp, and one
// unsplit wgmma chain (cuBLAS's too) flips about a third of the outputs.
inline constexpr double kMaxFlipFraction = 0.25;
double accumulation_gamma(std::int64_t k);
// Bound on the relative L2 error of the whole output: the rounding to fp16
// (about 2^-12 rms) with 4x room, plus a quarter of gamma's accumulation
// allowance. gamma bounds every element by Σ|a·b|, which on signed data at
// long K is far above |Σ a·b|: cuBLAS asked to accumulate in fp16 fits under
// it at K = 29568 (max error 4.7 against an allowance of 6.5) but misses this
// bound 5-fold (6.3e-3 against 1.2e-3; its fp32 output: 2.1e-4).
double rel_l2_bound(std::int64_t k);
// ‖C − ref‖ / ‖ref‖ over the compared outputs (‖C − ref‖ alone when ref is all zeros).
double relative_l2(const CompareStats& cs);

// What two runs of a kernel on the same inputs must agree on
// (docs/harness.md, "Verification", determinism).
enum class Determinism {
  bit_exact,         // every bit: the kernel declares nothing that may vary
  within_tolerance,  // both within the tolerance: it declares partial sums that meet across CTAs
  off,               // no second run (bench protocol's "old" verification only)
};
std::string to_string(Determinism d);

// Bit differences between runs are allowed only where the kernel declares a
// reduction whose order may vary: a launch contract with split_k > 1 (split-K
// in grid.z, or stream-K, which the tile compiler declares as split_k = its
// k-tiles) or a workspace (where the ABI puts split-K and stream-K partial
// sums; a translation unit declares one with tessera_workspace_bytes).
Determinism determinism_required(const nlohmann::json& contract, unsigned long long workspace_bytes);

// The shared-memory patterns of the two runs: zeros, then all bits set (NaN
// in fp16, fp32 and fp64, -1 as an integer).
inline constexpr std::uint32_t kSharedPatternFirst = 0x00000000u;
inline constexpr std::uint32_t kSharedPatternSecond = 0xFFFFFFFFu;
// The second run's output poison: a NaN other than the first's (kPoisonBits).
inline constexpr unsigned short kPoisonBitsSecond = 0xFDFF;

// The verdict on the second run: empty when it agrees with the first as `d`
// requires, else the failure. `identical`: the two outputs have the same
// digest; `repeat`: the second output checked against the same reference.
std::string determinism_failure(Determinism d, bool identical, const TrialStats& repeat);

struct VerifyContext {
  TaskBuffers& buffers;
  GemmCallable& callable;
  TesseraGemmParams params;  // points into buffers
  cudaStream_t stream;
  std::uint64_t seed;
  std::function<void(const std::string&)> heartbeat;
  Determinism determinism = Determinism::bit_exact;
};

// Runs the trials, then the last trial's inputs once more (the determinism
// check, unless ctx.determinism is off). The last trial uses uniform_sym data
// and leaves its inputs and reference in the buffers, so timing runs on
// fresh non-constant data and the output written during timing can be
// checked again afterwards. Throws CandidateFault when the candidate faults.
VerifyStats verify_candidate(VerifyContext& ctx, int random_trials);

// The determinism check on the inputs and reference the last trial left (it
// passed; its output digest `first_output`, its input digests `inputs`): the
// output poisoned with kPoisonBitsSecond, shared memory filled with
// kSharedPatternSecond, the call again, then inputs, canaries and the output
// compared. Fills v.determinism and v.repeat; a failure fails v.
struct InputDigests {
  unsigned long long a = 0, b = 0, bias = 0;
};
void check_determinism(VerifyContext& ctx, unsigned long long first_output, const InputDigests& inputs,
                       VerifyStats& v);

// Runs the candidate once on ctx.params and turns any CUDA error into a
// CandidateFault.
void run_once(VerifyContext& ctx);

// Digest of a buffer's payload (synchronises the stream).
unsigned long long read_digest(const GuardedBuffer& buf, unsigned long long* scratch, cudaStream_t s);
// The fp64 reference of the inputs now in b.A and b.B, into b.acc / b.absacc.
void compute_reference(TaskBuffers& b, cudaStream_t s);
// The same from other inputs of the task's shapes (the hidden copies while timing).
void compute_reference(TaskBuffers& b, const __half* A, const __half* B, cudaStream_t s);
// Compares b.C with the reference under the input variation in force.
TrialStats check_output(TaskBuffers& b, cudaStream_t s, const std::string& label);

}  // namespace tessera::worker
