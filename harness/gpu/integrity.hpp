#pragma once
// Every launch that is paid is a launch whose output can be checked
// (docs/harness.md, "Integrity"). The guards the timer wraps around a
// candidate's timed calls: the output (and the baselines' output) poisoned
// and the workspace zeroed before each call, the inputs' signs varied from
// call to call, randomly chosen calls checked on the device against the
// reference, fresh inputs once during the timing, and an audit of inputs and
// canaries afterwards.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "harness/gpu/task_buffers.hpp"
#include "harness/gpu/timing.hpp"

namespace tessera::gpu {

class CandidateGuards {
public:
  // `workspace` may be empty (no workspace). The inputs in `b` must be the
  // ones the reference in b.acc was computed from (the last verification trial).
  CandidateGuards(TaskBuffers& b, GuardedBuffer& workspace, cudaStream_t s, std::uint64_t seed);
  CandidateGuards(const CandidateGuards&) = delete;
  CandidateGuards& operator=(const CandidateGuards&) = delete;

  // For cold timing: poison, zero, vary before each call; check; verdict; refresh.
  const CallGuard& cold() const { return cold_; }
  // For host latency and counter passes: the same preparation and checks, no refresh.
  const CallGuard& plain() const { return plain_; }
  // For hot timing: `launch_into(i, s)` launches the candidate writing output
  // buffer i of `buffers` rotated buffers (TaskBuffers::rotation).
  HotGuard hot(std::function<void(int, cudaStream_t)> launch_into, int buffers);

  // After all timing: the inputs' variation undone, then inputs, bias and
  // every canary compared with what they were. Empty, or what was changed.
  std::string audit();

  int checks() const { return checks_total_; }

private:
  void prepare(cudaStream_t s);
  void check(const __half* C, cudaStream_t s);
  void begin(cudaStream_t s);
  std::string verdict();
  void refresh(cudaStream_t s);
  void take_digests();

  TaskBuffers& b_;
  GuardedBuffer& ws_;
  cudaStream_t s_;
  std::mt19937_64 rng_;
  CallGuard cold_, plain_;
  int checks_ = 0;        // checks enqueued since the last begin(): the verdict's denominator
  int checks_total_ = 0;  // for the report
  unsigned long long digest_a_ = 0, digest_b_ = 0, digest_bias_ = 0;
};

}  // namespace tessera::gpu
