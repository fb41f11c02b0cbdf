#include "worker/baselines/sample_check.hpp"

#include <cuda_fp16.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <random>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "worker/check.hpp"

namespace tessera::baselines {

namespace {

// Above this many input elements, only the sampled rows/columns are copied.
constexpr std::size_t kFullCopyMaxElems = std::size_t{64} << 20;

std::vector<__half> to_host(const __half* d, std::size_t n, cudaStream_t s) {
  std::vector<__half> h(n);
  TESSERA_CUDA_CHECK(cudaMemcpyAsync(h.data(), d, n * sizeof(__half), cudaMemcpyDeviceToHost, s));
  TESSERA_CUDA_CHECK(cudaStreamSynchronize(s));
  return h;
}

// `count` elements starting at d, `stride` elements apart.
std::vector<__half> strided_to_host(const __half* d, std::size_t count, std::size_t stride, cudaStream_t s) {
  std::vector<__half> h(count);
  TESSERA_CUDA_CHECK(cudaMemcpy2DAsync(h.data(), sizeof(__half), d, stride * sizeof(__half), sizeof(__half), count,
                                       cudaMemcpyDeviceToHost, s));
  TESSERA_CUDA_CHECK(cudaStreamSynchronize(s));
  return h;
}

std::vector<std::pair<int, int>> pick_elements(const GemmOperands& ops, int samples, std::uint64_t seed) {
  std::vector<std::pair<int, int>> out;
  const long long total = (long long)ops.M * ops.N;
  if (total <= samples) {
    for (int i = 0; i < ops.M; ++i)
      for (int j = 0; j < ops.N; ++j) out.emplace_back(i, j);
    return out;
  }
  out = {{0, 0}, {0, ops.N - 1}, {ops.M - 1, 0}, {ops.M - 1, ops.N - 1}};
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> ri(0, ops.M - 1), rj(0, ops.N - 1);
  while ((int)out.size() < samples) out.emplace_back(ri(rng), rj(rng));
  return out;
}

}  // namespace

double apply_epilogue(Epilogue e, double x) {
  switch (e) {
    case Epilogue::none:
    case Epilogue::bias: return x;
    case Epilogue::bias_relu: return x > 0 ? x : 0;
    case Epilogue::bias_gelu: {
      const double c = std::sqrt(2.0 / std::numbers::pi);
      return 0.5 * x * (1.0 + std::tanh(c * (x + 0.044715 * x * x * x)));
    }
  }
  return x;
}

SampleCheck check_sampled(const GemmOperands& ops, cudaStream_t stream, int samples, std::uint64_t seed) {
  SampleCheck r;
  const std::size_t M = std::size_t(ops.M), N = std::size_t(ops.N), K = std::size_t(ops.K);
  const bool full = M * K + N * K <= kFullCopyMaxElems;
  std::vector<__half> a_all, b_all, c_all, bias;
  if (full) {
    a_all = to_host(ops.A, M * K, stream);
    b_all = to_host(ops.B, N * K, stream);
  }
  if (M * N <= kFullCopyMaxElems) c_all = to_host(ops.C, M * N, stream);
  if (ops.epilogue != Epilogue::none) bias = to_host(ops.bias, N, stream);

  auto a_row = [&](int i) {
    if (full) return std::vector<__half>(a_all.begin() + std::ptrdiff_t(i * K), a_all.begin() + std::ptrdiff_t((i + 1) * K));
    return to_host(ops.A + std::size_t(i) * K, K, stream);
  };
  // Column j of op(B) as K values: a row of B for TN, a strided column for NN.
  auto b_col = [&](int j) {
    std::vector<__half> v(K);
    if (ops.layout == Layout::TN) {
      if (!full) return to_host(ops.B + std::size_t(j) * K, K, stream);
      std::copy_n(b_all.begin() + std::ptrdiff_t(j * K), K, v.begin());
    } else {
      if (!full) return strided_to_host(ops.B + j, K, N, stream);
      for (std::size_t k = 0; k < K; ++k) v[k] = b_all[k * N + std::size_t(j)];
    }
    return v;
  };

  for (auto [i, j] : pick_elements(ops, samples, seed)) {
    const std::vector<__half> a = a_row(i), b = b_col(j);
    double acc = 0, scale2 = 0;
    for (std::size_t k = 0; k < K; ++k) {
      const double p = double(__half2float(a[k])) * double(__half2float(b[k]));
      acc += p;
      scale2 += p * p;
    }
    if (!bias.empty()) acc += double(__half2float(bias[std::size_t(j)]));
    const double ref = apply_epilogue(ops.epilogue, acc);
    const std::size_t at = std::size_t(i) * N + std::size_t(j);
    const double c = double(__half2float(c_all.empty() ? to_host(ops.C + at, 1, stream)[0] : c_all[at]));
    const double denom = std::abs(ref) + std::sqrt(scale2) + 1e-6;
    const double err = std::isfinite(c) ? std::abs(c - ref) / denom : std::numeric_limits<double>::infinity();
    ++r.checked;
    r.max_norm_err = std::max(r.max_norm_err, err);
    if (!(err <= kCheckTolerance)) {
      if (r.failures++ == 0)
        r.error = fmt::format("C[{}][{}] = {} but the reference is {} (normalised error {:.3g} > {})", i, j, c, ref, err,
                              kCheckTolerance);
    }
  }
  r.passed = r.failures == 0 && r.checked > 0;
  return r;
}

}  // namespace tessera::baselines
