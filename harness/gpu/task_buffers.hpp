#pragma once
// Device buffers for one task, each surrounded by canary bands so that an
// out-of-bounds write shows up as a changed canary.
#include <cuda_fp16.h>

#include <cstddef>
#include <string>

#include "harness/core/task.hpp"
#include "harness/gpu/handles.hpp"

namespace tessera::gpu {

inline constexpr std::size_t kGuardBytes = 256 * 1024;  // per side; larger than any plausible stray tile store

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
  DeviceBuffer ref, absref;  // fp64 reference and Σ|a·b|
  DeviceBuffer scratch;      // digests, counts, compare stats
  explicit TaskBuffers(const Task& t);
  std::size_t c_count() const { return std::size_t(task.m) * std::size_t(task.n); }
  std::string describe_canaries(cudaStream_t s);  // empty when all intact
};

}  // namespace tessera::gpu
