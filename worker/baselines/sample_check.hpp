#pragma once
// A sanity check for baselines (not the candidate verification protocol):
// compares sampled output elements against an fp64 reference of the same
// fp16 inputs, so a wrongly set-up baseline cannot silently look fast.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>

#include "worker/baselines/baselines.hpp"

namespace tessera::baselines {

inline constexpr int kDefaultCheckSamples = 256;  // output elements compared
// |c - ref| / (|ref| + ||a_i ∘ b_j||_2) must stay below this: far above fp16
// output rounding (~5e-4), far below what a wrong layout produces (~1).
inline constexpr double kCheckTolerance = 1e-2;

struct SampleCheck {
  bool passed = false;
  long long checked = 0;
  long long failures = 0;
  double max_norm_err = 0;  // worst normalised error (see kCheckTolerance)
  std::string error;        // first failure, human-readable
};

// Reads the current contents of ops.C (call after one launch, synchronised).
// Every element when M*N <= samples, else `samples` pseudo-random ones plus
// the four corners.
SampleCheck check_sampled(const GemmOperands& ops, cudaStream_t stream, int samples = kDefaultCheckSamples,
                          std::uint64_t seed = 1);

// The epilogue applied to an fp64 accumulator; GELU is the tanh form, as in cuBLASLt.
double apply_epilogue(Epilogue e, double acc_plus_bias);

}  // namespace tessera::baselines
