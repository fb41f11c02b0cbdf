#include "worker/check.hpp"

#include <cstdio>

namespace tessera::worker {

const char* cublas_status_name(cublasStatus_t s) { return cublasGetStatusString(s); }

const char* cupti_result_name(CUptiResult r) {
  const char* s = nullptr;
  if (cuptiGetResultString(r, &s) != CUPTI_SUCCESS || s == nullptr) return "unknown CUPTI error";
  return s;
}

const char* cu_result_name(CUresult r) {
  // cuGetErrorName lives in libcuda, which we never link; the numeric code is
  // what the driver docs index by.
  static thread_local char buf[48];
  std::snprintf(buf, sizeof buf, "CUresult %d", static_cast<int>(r));
  return buf;
}

}  // namespace tessera::worker
