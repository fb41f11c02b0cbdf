#include "worker/baselines/detail/blas_handles.hpp"

#include "worker/check.hpp"

namespace tessera::baselines::detail {

CublasHandle make_cublas() {
  cublasHandle_t h = nullptr;
  TESSERA_CUBLAS_CHECK(cublasCreate(&h));
  return CublasHandle(h);
}

LtHandle make_lt() {
  cublasLtHandle_t h = nullptr;
  TESSERA_CUBLAS_CHECK(cublasLtCreate(&h));
  return LtHandle(h);
}

LtMatmulDesc make_matmul_desc(cublasComputeType_t compute, cudaDataType_t scale) {
  cublasLtMatmulDesc_t d = nullptr;
  TESSERA_CUBLAS_CHECK(cublasLtMatmulDescCreate(&d, compute, scale));
  return LtMatmulDesc(d);
}

LtLayout make_layout(cudaDataType_t type, std::uint64_t rows, std::uint64_t cols, std::int64_t ld) {
  cublasLtMatrixLayout_t l = nullptr;
  TESSERA_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&l, type, rows, cols, ld));
  return LtLayout(l);
}

LtPreference make_preference() {
  cublasLtMatmulPreference_t p = nullptr;
  TESSERA_CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&p));
  return LtPreference(p);
}

}  // namespace tessera::baselines::detail
