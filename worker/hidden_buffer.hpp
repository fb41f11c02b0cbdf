#pragma once
// Device memory that a candidate kernel cannot find: the harness's reference
// and its verdict counters live in the same CUDA context as the candidate, so
// a kernel that knew their addresses could copy the answer or clear a failed
// check. A HiddenBuffer is mapped at a random, granularity-aligned offset
// inside a large reserved range of virtual addresses that is otherwise left
// unmapped: guessing wrong, or scanning towards it, faults (an illegal
// address, which is the candidate's runtime_fault).
#include <cstddef>
#include <cstdint>

namespace tessera::worker {

inline constexpr std::size_t kHiddenRangeBytes = std::size_t(64) << 30;  // reserved per buffer; costs no memory

class HiddenBuffer {
public:
  HiddenBuffer() = default;
  // Falls back to a plain cudaMalloc (hidden() == false) where the driver
  // offers no virtual memory management.
  HiddenBuffer(std::size_t bytes, std::uint64_t seed);
  HiddenBuffer(HiddenBuffer&& o) noexcept;
  HiddenBuffer& operator=(HiddenBuffer&& o) noexcept;
  HiddenBuffer(const HiddenBuffer&) = delete;
  HiddenBuffer& operator=(const HiddenBuffer&) = delete;
  ~HiddenBuffer() noexcept;

  void* get() const { return ptr_; }
  template <class T>
  T* as() const { return static_cast<T*>(ptr_); }
  std::size_t bytes() const { return bytes_; }
  bool hidden() const { return reserved_ != 0; }

private:
  void release() noexcept;
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;        // as asked
  std::size_t mapped_ = 0;       // rounded up to the granularity
  unsigned long long reserved_ = 0;  // CUdeviceptr of the reserved range (0: plain allocation)
  unsigned long long handle_ = 0;    // CUmemGenericAllocationHandle
};

}  // namespace tessera::worker
