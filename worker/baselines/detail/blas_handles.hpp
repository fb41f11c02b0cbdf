#pragma once
// RAII owners for cuBLAS and cuBLASLt objects: non-copyable, movable,
// noexcept destructors that ignore errors (the context may be gone).
#include <cublasLt.h>
#include <cublas_v2.h>

#include <cstdint>
#include <utility>

namespace tessera::baselines::detail {

template <class H, cublasStatus_t (*Destroy)(H)>
class BlasOwner {
public:
  BlasOwner() = default;
  explicit BlasOwner(H h) : h_(h) {}
  BlasOwner(BlasOwner&& o) noexcept : h_(std::exchange(o.h_, nullptr)) {}
  BlasOwner& operator=(BlasOwner&& o) noexcept {
    if (this != &o) {
      reset();
      h_ = std::exchange(o.h_, nullptr);
    }
    return *this;
  }
  BlasOwner(const BlasOwner&) = delete;
  BlasOwner& operator=(const BlasOwner&) = delete;
  ~BlasOwner() noexcept { reset(); }
  H get() const { return h_; }

private:
  void reset() noexcept {
    if (h_) Destroy(h_);
    h_ = nullptr;
  }
  H h_ = nullptr;
};

using CublasHandle = BlasOwner<cublasHandle_t, &cublasDestroy_v2>;
using LtHandle = BlasOwner<cublasLtHandle_t, &cublasLtDestroy>;
using LtMatmulDesc = BlasOwner<cublasLtMatmulDesc_t, &cublasLtMatmulDescDestroy>;
using LtLayout = BlasOwner<cublasLtMatrixLayout_t, &cublasLtMatrixLayoutDestroy>;
using LtPreference = BlasOwner<cublasLtMatmulPreference_t, &cublasLtMatmulPreferenceDestroy>;

CublasHandle make_cublas();
LtHandle make_lt();
LtMatmulDesc make_matmul_desc(cublasComputeType_t compute, cudaDataType_t scale);
LtLayout make_layout(cudaDataType_t type, std::uint64_t rows, std::uint64_t cols, std::int64_t ld);
LtPreference make_preference();

}  // namespace tessera::baselines::detail
