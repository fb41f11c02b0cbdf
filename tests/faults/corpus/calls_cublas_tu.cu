// Fault corpus: a translation unit that hands the work to cuBLAS: rejected
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include "tessera_abi.cuh"
extern "C" int tessera_launch(const TesseraGemmParams* p, cudaStream_t stream) {
  static cublasHandle_t h = nullptr;
  if (!h) cublasCreate(&h);
  cublasSetStream(h, stream);
  const float one = 1.f, zero = 0.f;
  return cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, p->N, p->M, p->K, &one, p->B, CUDA_R_16F, p->K, p->A, CUDA_R_16F,
                      p->K, &zero, p->C, CUDA_R_16F, p->N, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
}
