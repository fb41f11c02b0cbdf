#include <fmt/format.h>

#include "worker/baselines/baselines.hpp"
#include "core/error.hpp"

namespace tessera::baselines {

GemmArgs gemm_args(Layout layout, int M, int N, int K) {
  TESSERA_REQUIRE(M > 0 && N > 0 && K > 0, fmt::format("bad GEMM shape {}x{}x{}", M, N, K));
  GemmArgs g;
  g.m = N;
  g.n = M;
  g.k = K;
  if (layout == Layout::TN) {
    // B is N×K row-major = K×N column-major: transpose it to get N×K.
    g.transa = CUBLAS_OP_T;
    g.a_rows = K;
    g.a_cols = N;
    g.lda = K;
  } else {
    // B is K×N row-major = N×K column-major: already op(A).
    g.transa = CUBLAS_OP_N;
    g.a_rows = N;
    g.a_cols = K;
    g.lda = N;
  }
  // A (M×K row-major) is A^T in column-major (K×M), exactly what C^T = op(B)·A^T needs.
  g.transb = CUBLAS_OP_N;
  g.b_rows = K;
  g.b_cols = M;
  g.ldb = K;
  g.c_rows = N;
  g.c_cols = M;
  g.ldc = N;
  return g;
}

GemmOperands operands_for(const Task& task, const __half* A, const __half* B, __half* C, const __half* bias) {
  GemmOperands ops;
  ops.A = A;
  ops.B = B;
  ops.C = C;
  ops.bias = bias;
  ops.M = int(task.m);
  ops.N = int(task.n);
  ops.K = int(task.k);
  ops.layout = task.layout;
  ops.epilogue = task.epilogue;
  return ops;
}

}  // namespace tessera::baselines
