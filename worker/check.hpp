#pragma once
// One check macro per API. Each throws tessera::Error naming the file, the
// line and the call. Only for tessera's own calls: a candidate's failure is
// caught and turned into a result status by the worker.
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cupti.h>

#include "core/error.hpp"

namespace tessera::worker {
const char* cublas_status_name(cublasStatus_t s);
const char* cupti_result_name(CUptiResult r);
const char* cu_result_name(CUresult r);
}  // namespace tessera::worker

#define TESSERA_CUDA_CHECK(call)                                                                   \
  do {                                                                                             \
    cudaError_t tessera_rc_ = (call);                                                                       \
    if (tessera_rc_ != cudaSuccess)                                                                         \
      throw ::tessera::Error(::tessera::where(__FILE__, __LINE__, #call, cudaGetErrorString(tessera_rc_))); \
  } while (0)

#define TESSERA_CU_CHECK(call)                                                                                \
  do {                                                                                                        \
    CUresult tessera_rc_ = (call);                                                                                     \
    if (tessera_rc_ != CUDA_SUCCESS)                                                                                   \
      throw ::tessera::Error(::tessera::where(__FILE__, __LINE__, #call, ::tessera::worker::cu_result_name(tessera_rc_))); \
  } while (0)

#define TESSERA_CUBLAS_CHECK(call)                                                                      \
  do {                                                                                                  \
    cublasStatus_t tessera_rc_ = (call);                                                                         \
    if (tessera_rc_ != CUBLAS_STATUS_SUCCESS)                                                                    \
      throw ::tessera::Error(                                                                           \
          ::tessera::where(__FILE__, __LINE__, #call, ::tessera::worker::cublas_status_name(tessera_rc_)));         \
  } while (0)

#define TESSERA_CUPTI_CHECK(call)                                                                       \
  do {                                                                                                  \
    CUptiResult tessera_rc_ = (call);                                                                            \
    if (tessera_rc_ != CUPTI_SUCCESS)                                                                            \
      throw ::tessera::Error(                                                                           \
          ::tessera::where(__FILE__, __LINE__, #call, ::tessera::worker::cupti_result_name(tessera_rc_)));          \
  } while (0)
