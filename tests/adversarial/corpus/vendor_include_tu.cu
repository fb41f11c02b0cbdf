// Adversarial corpus -- a vendor library through its header, translation unit.
// Tries: hands the GEMM to cuBLASLt's heuristic matmul (the library it is
// measured against), with a plain #include.
// Caught statically: an include of a cuBLAS/cuDNN/... header is a policy
// violation, before anything is compiled -> rejected ("cublas").
#include <cublasLt.h>
#include <cuda_runtime.h>
#include "tessera_abi.cuh"

extern "C" int tessera_launch(const TesseraGemmParams* p, cudaStream_t stream) {
  static cublasLtHandle_t lt = nullptr;
  if (!lt && cublasLtCreate(&lt) != CUBLAS_STATUS_SUCCESS) return 1;
  cublasLtMatmulDesc_t op;
  cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F);
  const cublasOperation_t t = CUBLAS_OP_T;
  cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &t, sizeof t);
  cublasLtMatrixLayout_t a, b, c;  // column-major view: C^T (N x M) = B (N x K) . A^T (K x M)
  cublasLtMatrixLayoutCreate(&a, CUDA_R_16F, p->K, p->N, p->K);
  cublasLtMatrixLayoutCreate(&b, CUDA_R_16F, p->K, p->M, p->K);
  cublasLtMatrixLayoutCreate(&c, CUDA_R_16F, p->N, p->M, p->N);
  const float one = 1.f, zero = 0.f;
  const cublasStatus_t s = cublasLtMatmul(lt, op, &one, p->B, a, p->A, b, &zero, p->C, c, p->C, c, nullptr, nullptr,
                                          0, stream);
  return s == CUBLAS_STATUS_SUCCESS ? 0 : 2;
}
