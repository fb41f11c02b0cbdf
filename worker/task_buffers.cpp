#include "worker/task_buffers.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "worker/check.hpp"
#include "worker/verify.hpp"
#include "worker/verify_kernels.hpp"

namespace tessera::worker {

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
      A_copy(std::size_t(t.m) * t.k * sizeof(__half), seed ^ 0x5),
      B_copy(std::size_t(t.n) * t.k * sizeof(__half), seed ^ 0x6),
      scratch(4096) {}

std::string TaskBuffers::describe_canaries(cudaStream_t s, bool with_rotation) {
  std::string out;
  auto* sc = scratch.as<unsigned long long>();
  auto note = [&](const std::string& name, const GuardedBuffer& buf) {
    if (auto n = buf.damaged_canaries(sc, s); n > 0)
      out += fmt::format("{}{} canary bytes around {} overwritten", out.empty() ? "" : "; ", n, name);
  };
  for (auto [name, buf] : {std::pair{"A", &A}, {"B", &B}, {"C", &C}, {"bias", &bias}}) note(name, *buf);
  if (with_rotation) {
    for (std::size_t i = 0; i < rotation.size(); ++i) note(fmt::format("hot output {}", i), rotation[i]);
    for (std::size_t i = 0; i < hot_A.size(); ++i) {
      note(fmt::format("hot input set {} (A)", i + 1), hot_A[i]);
      note(fmt::format("hot input set {} (B)", i + 1), hot_B[i]);
    }
  }
  return out;
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

int TaskBuffers::ensure_hot_sets(int wanted, cudaStream_t s) {
  const int outputs = ensure_rotation(wanted, s);
  const std::size_t one = A.bytes() + B.bytes() + 4 * kGuardBytes;
  const int extra_affordable = static_cast<int>(kHotInputBudgetBytes / std::max<std::size_t>(one, 1));
  const int sets = std::max(1, std::min(outputs, 1 + extra_affordable));
  while (static_cast<int>(hot_A.size()) < sets - 1) {
    hot_A.emplace_back(A.bytes());
    hot_B.emplace_back(B.bytes());
  }
  // Armed for every evaluation, like the rotated outputs.
  for (std::size_t i = 0; i < hot_A.size(); ++i) {
    hot_A[i].arm_canaries(s);
    hot_B[i].arm_canaries(s);
  }
  return sets;
}

__half* TaskBuffers::hot_a(int set) const {
  return static_cast<__half*>(set == 0 ? A.data() : hot_A.at(static_cast<std::size_t>(set - 1)).data());
}

__half* TaskBuffers::hot_b(int set) const {
  return static_cast<__half*>(set == 0 ? B.data() : hot_B.at(static_cast<std::size_t>(set - 1)).data());
}

TesseraGemmParams gemm_params(const TaskBuffers& b, const GuardedBuffer& workspace, int sm_count) {
  const Task& t = b.task;
  TesseraGemmParams p{};
  p.A = static_cast<const __half*>(b.A.data());
  p.B = static_cast<const __half*>(b.B.data());
  p.C = static_cast<__half*>(b.C.data());
  p.bias = t.epilogue == Epilogue::none ? nullptr : static_cast<const __half*>(b.bias.data());
  p.workspace = workspace.data();
  p.workspace_bytes = workspace.bytes();
  p.M = static_cast<int>(t.m);
  p.N = static_cast<int>(t.n);
  p.K = static_cast<int>(t.k);
  p.lda = p.K;
  p.ldb = t.layout == Layout::TN ? p.K : p.N;
  p.ldc = p.N;
  p.layout = t.layout == Layout::TN ? 0 : 1;
  p.num_sms = sm_count;
  return p;
}

}  // namespace tessera::worker
