#pragma once
// Device buffers for one task, each surrounded by canary bands so that an
// out-of-bounds write shows up as a changed canary. The reference and the
// verdict counters are hidden (hidden_buffer.hpp): a candidate running in the
// same context must not read the answer or clear a failed check.
#include <cuda_fp16.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/abi/tessera_abi.cuh"
#include "core/task.hpp"
#include "worker/handles.hpp"
#include "worker/hidden_buffer.hpp"
#include "worker/integrity_kernels.hpp"

namespace tessera::worker {

inline constexpr std::size_t kGuardBytes = 256 * 1024;  // per side; larger than any plausible stray tile store
inline constexpr std::size_t kRotationBudgetBytes = std::size_t(2) << 30;  // hot timing's rotated outputs, in all
inline constexpr std::size_t kHotInputBudgetBytes = std::size_t(2) << 30;  // hot timing's extra input sets, in all

// payload bytes with kGuardBytes of canary before and after.
class GuardedBuffer {
public:
  GuardedBuffer() = default;
  explicit GuardedBuffer(std::size_t payload_bytes);
  void* data() const { return payload_bytes_ ? static_cast<char*>(raw_.get()) + kGuardBytes : nullptr; }
  std::size_t bytes() const { return payload_bytes_; }
  void arm_canaries(cudaStream_t s) const;
  // Number of canary bytes changed (synchronises the stream).
  unsigned long long damaged_canaries(unsigned long long* scratch, cudaStream_t s) const;

private:
  DeviceBuffer raw_;
  std::size_t payload_bytes_ = 0;
};

struct TaskBuffers {
  Task task;
  GuardedBuffer A, B, C, C_baseline, bias;
  HiddenBuffer acc, absacc;  // fp64 Σ a·b and Σ|a·b| of the inputs (A and B, or their copies while timed)
  HiddenBuffer verdict;      // CompareStats of the checks of one timing batch
  // The harness's own copies of A and B while timing: fresh inputs go to both,
  // the reference of a checked call is computed from these, and A and B are
  // compared with them afterwards, so a kernel that changes its inputs cannot
  // move the reference it is checked against.
  HiddenBuffer A_copy, B_copy;
  DeviceBuffer scratch;      // digests, counts, compare stats of the verification trials
  std::vector<GuardedBuffer> rotation;  // hot timing's outputs (allocated on first use)
  // Hot timing's input sets beyond the first (which is A and B), one per
  // replayed call: allocated on first use.
  std::vector<GuardedBuffer> hot_A, hot_B;

  TaskBuffers(const Task& t, std::uint64_t seed);
  std::size_t c_count() const { return std::size_t(task.m) * std::size_t(task.n); }
  // Empty when all intact: A, B, C and bias, and the hot-timing outputs when
  // `with_rotation` (they are armed only when hot timing starts).
  std::string describe_canaries(cudaStream_t s, bool with_rotation = false);
  // The arguments that check `out` against the reference in acc/absacc.
  CheckArgs check_args(const __half* out) const;
  // Up to `wanted` rotated outputs within kRotationBudgetBytes (at least 1),
  // their canaries armed on s.
  int ensure_rotation(int wanted, cudaStream_t s);
  // Hot timing's calls per replay: up to `wanted`, as many as can each have an
  // output (rotation, kRotationBudgetBytes) and an input set (set 0 is A and
  // B, the others hot_A/hot_B within kHotInputBudgetBytes) of their own; at
  // least 1. Every canary armed on s.
  int ensure_hot_sets(int wanted, cudaStream_t s);
  // Input set i of hot timing (0: A and B).
  __half* hot_a(int set) const;
  __half* hot_b(int set) const;
};

// The ABI's parameter block for a call on b's buffers (C = b.C) and `workspace`.
TesseraGemmParams gemm_params(const TaskBuffers& b, const GuardedBuffer& workspace, int sm_count);

}  // namespace tessera::worker
