#include "harness/gpu/task_buffers.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "harness/gpu/check.hpp"
#include "harness/gpu/verify.hpp"
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

TaskBuffers::TaskBuffers(const Task& t, std::uint64_t seed)
    : task(t),
      A(std::size_t(t.m) * t.k * sizeof(__half)),
      B(std::size_t(t.n) * t.k * sizeof(__half)),
      C(std::size_t(t.m) * t.n * sizeof(__half)),
      C_baseline(std::size_t(t.m) * t.n * sizeof(__half)),
      bias(std::size_t(t.n) * sizeof(__half)),
      acc(std::size_t(t.m) * t.n * sizeof(double), seed ^ 0x1),
      absacc(std::size_t(t.m) * t.n * sizeof(double), seed ^ 0x2),
      verdict(sizeof(CompareStats), seed ^ 0x3),
      scratch(4096) {}

std::string TaskBuffers::describe_canaries(cudaStream_t s) {
  std::string out;
  auto* sc = scratch.as<unsigned long long>();
  auto note = [&](const std::string& name, const GuardedBuffer& buf) {
    if (auto n = buf.damaged_canaries(sc, s); n > 0)
      out += fmt::format("{}{} canary bytes around {} overwritten", out.empty() ? "" : "; ", n, name);
  };
  for (auto [name, buf] : {std::pair{"A", &A}, {"B", &B}, {"C", &C}, {"bias", &bias}}) note(name, *buf);
  for (std::size_t i = 0; i < rotation.size(); ++i) note(fmt::format("hot output {}", i), rotation[i]);
  return out;
}

void TaskBuffers::vary_inputs(std::uint64_t new_seed_a, std::uint64_t new_seed_b, cudaStream_t s) {
  // A is M×K row-major: its rows are C's rows. B's output column j is row j of
  // an N×K matrix (TN) or column j of a K×N matrix (NN).
  harness_vary(static_cast<__half*>(A.data()), std::size_t(task.m), std::size_t(task.k), true, seed_a, new_seed_a, s);
  const bool tn = task.layout == Layout::TN;
  harness_vary(static_cast<__half*>(B.data()), tn ? std::size_t(task.n) : std::size_t(task.k),
               tn ? std::size_t(task.k) : std::size_t(task.n), tn, seed_b, new_seed_b, s);
  seed_a = new_seed_a;
  seed_b = new_seed_b;
}

CheckArgs TaskBuffers::check_args(const __half* out) const {
  CheckArgs a;
  a.C = out;
  a.acc = acc.as<double>();
  a.absacc = absacc.as<double>();
  a.bias = task.epilogue == Epilogue::none ? nullptr : static_cast<const __half*>(bias.data());
  a.m = std::size_t(task.m);
  a.n = std::size_t(task.n);
  a.gamma = accumulation_gamma(task.k);
  a.epilogue = static_cast<int>(task.epilogue);
  a.seed_a = seed_a;
  a.seed_b = seed_b;
  return a;
}

int TaskBuffers::ensure_rotation(int wanted, cudaStream_t s) {
  const std::size_t one = C.bytes() + 2 * kGuardBytes;
  const int affordable = static_cast<int>(std::max<std::size_t>(1, kRotationBudgetBytes / std::max<std::size_t>(one, 1)));
  const int n = std::max(1, std::min(wanted, affordable));
  while (static_cast<int>(rotation.size()) < n) rotation.emplace_back(C.bytes());
  // Armed for every evaluation: a damaged band must be blamed on the candidate that damaged it.
  for (const auto& r : rotation) r.arm_canaries(s);
  return n;
}

}  // namespace tessera::gpu
