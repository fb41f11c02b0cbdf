#include "harness/gpu/task_buffers.hpp"

#include <fmt/format.h>

#include "harness/gpu/check.hpp"
#include "harness/gpu/verify_kernels.hpp"

namespace tessera::gpu {

GuardedBuffer::GuardedBuffer(std::size_t payload_bytes)
    : raw_(payload_bytes + 2 * kGuardBytes), payload_bytes_(payload_bytes) {}

void GuardedBuffer::arm_canaries(cudaStream_t s) const {
  fill_bytes(raw_.get(), kGuardBytes, kCanaryByte, s);
  fill_bytes(static_cast<char*>(raw_.get()) + kGuardBytes + payload_bytes_, kGuardBytes, kCanaryByte, s);
}

unsigned long long GuardedBuffer::damaged_canaries(unsigned long long* scratch, cudaStream_t s) const {
  unsigned long long total = 0, n = 0;
  for (char* p : {static_cast<char*>(raw_.get()), static_cast<char*>(raw_.get()) + kGuardBytes + payload_bytes_}) {
    count_not_equal(p, kGuardBytes, kCanaryByte, scratch, s);
    TESSERA_CUDA_CHECK(cudaMemcpyAsync(&n, scratch, sizeof n, cudaMemcpyDeviceToHost, s));
    TESSERA_CUDA_CHECK(cudaStreamSynchronize(s));
    total += n;
  }
  return total;
}

TaskBuffers::TaskBuffers(const Task& t)
    : task(t),
      A(std::size_t(t.m) * t.k * sizeof(__half)),
      B(std::size_t(t.n) * t.k * sizeof(__half)),
      C(std::size_t(t.m) * t.n * sizeof(__half)),
      C_baseline(std::size_t(t.m) * t.n * sizeof(__half)),
      bias(std::size_t(t.n) * sizeof(__half)),
      ref(std::size_t(t.m) * t.n * sizeof(double)),
      absref(std::size_t(t.m) * t.n * sizeof(double)),
      scratch(4096) {}

std::string TaskBuffers::describe_canaries(cudaStream_t s) {
  std::string out;
  auto* sc = scratch.as<unsigned long long>();
  for (auto [name, buf] : {std::pair{"A", &A}, {"B", &B}, {"C", &C}, {"bias", &bias}}) {
    if (auto n = buf->damaged_canaries(sc, s); n > 0)
      out += fmt::format("{}{} canary bytes around {} overwritten", out.empty() ? "" : "; ", n, name);
  }
  return out;
}

}  // namespace tessera::gpu
