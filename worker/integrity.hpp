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

#include "worker/candidate_runtime.hpp"
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
  // For hot timing: up to `wanted` calls per replay (as many as the buffer
  // budgets allow, TaskBuffers::ensure_hot_sets), call i on a parameter block
  // of its own (`params` with input set i and output i, prepared by
  // `callable`). Before every replay all outputs are poisoned and all input
  // sets refreshed, so no call of a replay sees inputs another call saw; one
  // call drawn at random is checked after it, against the reference of its
  // own inputs; after the last replay every input set is audited. The guard
  // refers to `callable` and to this object: both must outlive its use.
  HotGuard hot(GemmCallable& callable, const TesseraGemmParams& params, int wanted);

  // After all timing: A and B compared with the hidden copies (and hot
  // timing's other input sets with copies written from their seeds), every
  // canary (output, rotated outputs, hot input sets, inputs, workspace) with
  // what it was.
  Damage audit();

  int checks() const { return checks_total_; }

private:
  void fresh_inputs(cudaStream_t s);
  void fresh_set(int set, std::uint64_t seed, cudaStream_t s);
  void copies_from(std::uint64_t seed, cudaStream_t s);
  void check_hot(int call, cudaStream_t s);
  std::string audit_hot_inputs();
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
  std::vector<TesseraGemmParams> hot_params_;  // one per call of a hot replay
  std::vector<std::uint64_t> hot_seeds_;      // each input set's values at the last replay
  std::uint64_t set0_seed_ = 0;               // A and B's (and their copies') current values
};

}  // namespace tessera::worker
