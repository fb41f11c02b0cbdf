// The row-major -> column-major mapping, checked two ways: the exact
// arguments, and a host model of cublasGemmEx fed with them.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "worker/baselines/baselines.hpp"
#include "core/error.hpp"

namespace tessera::baselines {
namespace {

TEST(GemmArgs, TNMapsToTransposedBTimesA) {
  const GemmArgs g = gemm_args(Layout::TN, 128, 256, 64);
  EXPECT_EQ(g.transa, CUBLAS_OP_T);
  EXPECT_EQ(g.transb, CUBLAS_OP_N);
  EXPECT_EQ(g.m, 256);  // N
  EXPECT_EQ(g.n, 128);  // M
  EXPECT_EQ(g.k, 64);
  EXPECT_EQ(g.lda, 64);   // B is N×K row-major: ld = K
  EXPECT_EQ(g.ldb, 64);   // A is M×K row-major: ld = K
  EXPECT_EQ(g.ldc, 256);  // C is M×N row-major: ld = N
  EXPECT_EQ(g.a_rows, 64);
  EXPECT_EQ(g.a_cols, 256);
  EXPECT_EQ(g.b_rows, 64);
  EXPECT_EQ(g.b_cols, 128);
  EXPECT_EQ(g.c_rows, 256);
  EXPECT_EQ(g.c_cols, 128);
}

TEST(GemmArgs, NNMapsToBTimesA) {
  const GemmArgs g = gemm_args(Layout::NN, 100, 72, 40);
  EXPECT_EQ(g.transa, CUBLAS_OP_N);
  EXPECT_EQ(g.transb, CUBLAS_OP_N);
  EXPECT_EQ(g.m, 72);
  EXPECT_EQ(g.n, 100);
  EXPECT_EQ(g.k, 40);
  EXPECT_EQ(g.lda, 72);  // B is K×N row-major: ld = N
  EXPECT_EQ(g.ldb, 40);
  EXPECT_EQ(g.ldc, 72);
  EXPECT_EQ(g.a_rows, 72);
  EXPECT_EQ(g.a_cols, 40);
}

TEST(GemmArgs, TaskOverloadUsesTheTaskLayoutAndShape) {
  const GemmArgs g = gemm_args(task_from_shape("100x72x40", "NN"));
  const GemmArgs h = gemm_args(Layout::NN, 100, 72, 40);
  EXPECT_EQ(g.transa, h.transa);
  EXPECT_EQ(g.m, 72);
  EXPECT_EQ(g.n, 100);
  EXPECT_EQ(g.lda, h.lda);
}

TEST(GemmArgs, RejectsEmptyShapes) { EXPECT_THROW(gemm_args(Layout::TN, 0, 4, 4), Error); }

// cuBLAS semantics on the host: column-major C(m×n) = op(A)·op(B).
std::vector<double> colmajor_gemm(const GemmArgs& g, const std::vector<double>& a, const std::vector<double>& b) {
  std::vector<double> c(std::size_t(g.ldc) * g.n, 0.0);
  auto opa = [&](int i, int l) { return g.transa == CUBLAS_OP_N ? a[i + std::size_t(l) * g.lda] : a[l + std::size_t(i) * g.lda]; };
  auto opb = [&](int l, int j) { return g.transb == CUBLAS_OP_N ? b[l + std::size_t(j) * g.ldb] : b[j + std::size_t(l) * g.ldb]; };
  for (int j = 0; j < g.n; ++j)
    for (int i = 0; i < g.m; ++i) {
      double s = 0;
      for (int l = 0; l < g.k; ++l) s += opa(i, l) * opb(l, j);
      c[i + std::size_t(j) * g.ldc] = s;
    }
  return c;
}

void expect_mapping_computes_row_major_product(Layout layout, int M, int N, int K) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<double> A(std::size_t(M) * K), B(std::size_t(N) * K);
  for (auto& x : A) x = u(rng);
  for (auto& x : B) x = u(rng);
  const GemmArgs g = gemm_args(layout, M, N, K);
  // cuBLAS's A is the task's B, cuBLAS's B is the task's A.
  const std::vector<double> C = colmajor_gemm(g, B, A);
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      double ref = 0;
      for (int k = 0; k < K; ++k) {
        const double b = layout == Layout::TN ? B[std::size_t(j) * K + k] : B[std::size_t(k) * N + j];
        ref += A[std::size_t(i) * K + k] * b;
      }
      ASSERT_NEAR(C[std::size_t(i) * N + j], ref, 1e-12) << "C[" << i << "][" << j << "] " << to_string(layout);
    }
}

TEST(GemmArgs, TNComputesRowMajorProduct) { expect_mapping_computes_row_major_product(Layout::TN, 5, 7, 3); }
TEST(GemmArgs, NNComputesRowMajorProduct) { expect_mapping_computes_row_major_product(Layout::NN, 6, 4, 9); }

TEST(GemmArgs, OperandsForCopiesTheTask) {
  const Task t = task_from_shape("100x72x40", "NN", "bias_relu");
  const GemmOperands ops = operands_for(t, nullptr, nullptr, nullptr, nullptr);
  EXPECT_EQ(ops.M, 100);
  EXPECT_EQ(ops.N, 72);
  EXPECT_EQ(ops.K, 40);
  EXPECT_EQ(ops.layout, Layout::NN);
  EXPECT_EQ(ops.epilogue, Epilogue::bias_relu);
}

}  // namespace
}  // namespace tessera::baselines
