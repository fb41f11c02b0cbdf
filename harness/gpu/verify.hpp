#pragma once
// The verification protocol (docs/harness.md, "Verification") for one loaded candidate.
#include <cstdint>
#include <functional>
#include <string>

#include "harness/core/result.hpp"
#include "harness/gpu/candidate_runtime.hpp"
#include "harness/gpu/task_buffers.hpp"

namespace tessera::gpu {

// Accumulation tolerance: fp32 accumulation over K loses at most a few units
// of 2^-24 per accumulation step (16-wide MMA steps), relative to Σ|a·b|;
// fp16 accumulation loses 2^-11 per step and fails this by orders of magnitude.
inline constexpr double kGammaSafety = 8.0;
inline constexpr double kMaxFlipFraction = 0.25;  // elements whose fp16 result differs from round(ref)
double accumulation_gamma(std::int64_t k);

struct VerifyContext {
  TaskBuffers& buffers;
  GemmCallable& callable;
  TesseraGemmParams params;  // points into buffers
  cudaStream_t stream;
  std::uint64_t seed;
  std::function<void(const std::string&)> heartbeat;
};

// Runs the trials. The last trial uses uniform_sym data and leaves its inputs
// and reference in the buffers, so timing runs on fresh non-constant data and
// the output written during timing can be checked again afterwards.
// Throws CandidateFault when the candidate faults.
VerifyStats verify_candidate(VerifyContext& ctx, int random_trials);

// Digest of a buffer's payload (synchronises the stream).
unsigned long long read_digest(const GuardedBuffer& buf, unsigned long long* scratch, cudaStream_t s);
// The fp64 reference of the inputs now in b.A and b.B, into b.acc / b.absacc.
void compute_reference(TaskBuffers& b, cudaStream_t s);
// The same from other inputs of the task's shapes (the hidden copies while timing).
void compute_reference(TaskBuffers& b, const __half* A, const __half* B, cudaStream_t s);
// Compares b.C with the reference under the input variation in force.
TrialStats check_output(TaskBuffers& b, cudaStream_t s, const std::string& label);

}  // namespace tessera::gpu
