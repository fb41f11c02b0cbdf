#pragma once
// Every launch that is paid is a launch whose output can be checked
// (docs/harness.md, "Integrity"). The guards the timer wraps around a
// candidate's timed calls: before each call the output poisoned, the
// workspace zeroed and A and B filled with fresh values (and the harness's
// hidden copies of them); after randomly chosen calls the reference of the
// copies computed and the output checked on the device; inputs (against the
// copies) and canaries audited afterwards.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "worker/task_buffers.hpp"
#include "worker/timing.hpp"

namespace tessera::worker {

// What the audit after timing found changed: the inputs (against the hidden
// copies), or canary bytes around a buffer.
struct Damage {
  enum class Kind { none, inputs, canaries } kind = Kind::none;
  std::string what;  // for the verdict
};

class CandidateGuards {
public:
  // `workspace` may be empty (no workspace).
  CandidateGuards(TaskBuffers& b, GuardedBuffer& workspace, cudaStream_t s, std::uint64_t seed);
  CandidateGuards(const CandidateGuards&) = delete;
  CandidateGuards& operator=(const CandidateGuards&) = delete;

  // For cold timing, host latency and the counter passes.
  const CallGuard& cold() const { return cold_; }
  // For hot timing: `launch_into(i, s)` launches the candidate writing output
  // buffer i of `buffers` rotated buffers (TaskBuffers::rotation). The inputs
  // are fresh for each replay (not for each call inside it).
  HotGuard hot(std::function<void(int, cudaStream_t)> launch_into, int buffers);

  // After all timing: A and B compared with the hidden copies, every canary
  // (output, rotated outputs, inputs, workspace) with what it was.
  Damage audit();

  int checks() const { return checks_total_; }

private:
  void fresh_inputs(cudaStream_t s);
  void prepare(cudaStream_t s);
  void check(const __half* C, cudaStream_t s);
  void begin(cudaStream_t s);
  std::string verdict();

  TaskBuffers& b_;
  GuardedBuffer& ws_;
  cudaStream_t s_;
  std::mt19937_64 rng_;
  CallGuard cold_;
  int checks_ = 0;        // checks enqueued since the last begin(): the verdict's denominator
  int checks_total_ = 0;  // for the report
  bool rotation_armed_ = false;  // hot timing ran: its outputs' canaries are this evaluation's
};

}  // namespace tessera::worker
