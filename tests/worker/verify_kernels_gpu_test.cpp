// The verification kernels against host arithmetic: the input digest is the
// sum it is documented to be (and sees a one-byte change), and the fp64
// reference GEMM is bit-identical to a sequential fp64 sum on odd shapes.
// Skips without a GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include "worker/handles.hpp"
#include "worker/verify_kernels.hpp"
#include "tests/testing.hpp"

namespace tessera::worker {
namespace {

std::uint64_t splitmix(std::uint64_t x) {  // the digest's hash, as the kernel defines it
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

std::uint64_t host_digest(const std::vector<unsigned char>& bytes) {
  std::uint64_t sum = 0;
  for (std::size_t i = 0; i < bytes.size(); ++i) sum += splitmix((std::uint64_t(bytes[i]) << 56) ^ i);
  return sum;
}

std::uint64_t device_digest(const DeviceBuffer& buf, std::size_t bytes, const DeviceBuffer& out) {
  digest(buf.get(), bytes, out.as<unsigned long long>(), nullptr);
  std::uint64_t v = 0;
  EXPECT_EQ(cudaMemcpy(&v, out.get(), sizeof v, cudaMemcpyDeviceToHost), cudaSuccess);
  return v;
}

TEST(VerifyKernelsGpu, TheDigestIsTheSumOfItsPerByteHashesAndSeesOneChangedByte) {
  TESSERA_REQUIRE_GPU();
  // More bytes than the capped grid has threads, and not a multiple of a warp.
  const std::size_t n = 3'000'017;
  std::vector<unsigned char> host(n);
  for (std::size_t i = 0; i < n; ++i) host[i] = static_cast<unsigned char>(splitmix(i) >> 32);
  DeviceBuffer buf(n), out(sizeof(unsigned long long));
  ASSERT_EQ(cudaMemcpy(buf.get(), host.data(), n, cudaMemcpyHostToDevice), cudaSuccess);
  const std::uint64_t before = device_digest(buf, n, out);
  EXPECT_EQ(before, host_digest(host));

  host[n / 3] ^= 0x01;  // one bit of one byte
  ASSERT_EQ(cudaMemcpy(buf.get(), host.data(), n, cudaMemcpyHostToDevice), cudaSuccess);
  const std::uint64_t after = device_digest(buf, n, out);
  EXPECT_EQ(after, host_digest(host));
  EXPECT_NE(after, before);
}

// Σ a·b and Σ |a·b| in k order with fused multiply-adds: each product of two
// halves is exact in fp64, so this is the kernel's rounding, step for step.
void host_reference(const std::vector<__half>& a, const std::vector<__half>& b, int m, int n, int k, int layout,
                    std::vector<double>& acc, std::vector<double>& abs_acc) {
  acc.assign(std::size_t(m) * n, 0.0);
  abs_acc.assign(std::size_t(m) * n, 0.0);
  for (int r = 0; r < m; ++r)
    for (int c = 0; c < n; ++c) {
      double s = 0, sa = 0;
      for (int q = 0; q < k; ++q) {
        const double x = __half2float(a[std::size_t(r) * k + q]);
        const double y = __half2float(layout == 0 ? b[std::size_t(c) * k + q] : b[std::size_t(q) * n + c]);
        s = std::fma(x, y, s);
        sa = std::fma(std::fabs(x), std::fabs(y), sa);
      }
      acc[std::size_t(r) * n + c] = s;
      abs_acc[std::size_t(r) * n + c] = sa;
    }
}

TEST(VerifyKernelsGpu, TheReferenceGemmMatchesSequentialFp64SumsBitForBit) {
  TESSERA_REQUIRE_GPU();
  struct Shape { int m, n, k; };
  for (const Shape sh : {Shape{37, 45, 133}, Shape{1, 70, 16}, Shape{65, 1, 17}, Shape{128, 64, 64}}) {
    for (int layout : {0, 1}) {
      SCOPED_TRACE(::testing::Message() << sh.m << "x" << sh.n << "x" << sh.k << " layout " << layout);
      const std::size_t na = std::size_t(sh.m) * sh.k, nb = std::size_t(sh.n) * sh.k, nc = std::size_t(sh.m) * sh.n;
      DeviceBuffer a(na * 2), b(nb * 2), acc(nc * 8), abs_acc(nc * 8);
      fill_random(a.as<__half>(), na, Distribution::mixed_scale, 11, nullptr);
      fill_random(b.as<__half>(), nb, Distribution::uniform_sym, 12, nullptr);
      reference_gemm(a.as<__half>(), b.as<__half>(), acc.as<double>(), abs_acc.as<double>(), sh.m, sh.n, sh.k, layout,
                     nullptr);
      ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
      std::vector<__half> ha(na), hb(nb);
      std::vector<double> got(nc), got_abs(nc), want, want_abs;
      ASSERT_EQ(cudaMemcpy(ha.data(), a.get(), na * 2, cudaMemcpyDeviceToHost), cudaSuccess);
      ASSERT_EQ(cudaMemcpy(hb.data(), b.get(), nb * 2, cudaMemcpyDeviceToHost), cudaSuccess);
      ASSERT_EQ(cudaMemcpy(got.data(), acc.get(), nc * 8, cudaMemcpyDeviceToHost), cudaSuccess);
      ASSERT_EQ(cudaMemcpy(got_abs.data(), abs_acc.get(), nc * 8, cudaMemcpyDeviceToHost), cudaSuccess);
      host_reference(ha, hb, sh.m, sh.n, sh.k, layout, want, want_abs);
      int differ = 0;
      for (std::size_t i = 0; i < nc; ++i) differ += got[i] != want[i] || got_abs[i] != want_abs[i];
      EXPECT_EQ(differ, 0) << "first: " << got[0] << " vs " << want[0];
    }
  }
}

}  // namespace
}  // namespace tessera::worker
