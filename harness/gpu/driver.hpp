#pragma once
// Driver API entry points, fetched through the runtime
// (cudaGetDriverEntryPointByVersion) so no binary links libcuda.so.1 and
// every binary starts on a machine without a GPU driver.
#include <cuda.h>

namespace tessera::gpu {

struct DriverApi {
  CUresult (*cuModuleLoadData)(CUmodule*, const void*) = nullptr;
  CUresult (*cuModuleUnload)(CUmodule) = nullptr;
  CUresult (*cuModuleGetFunction)(CUfunction*, CUmodule, const char*) = nullptr;
  CUresult (*cuFuncSetAttribute)(CUfunction, CUfunction_attribute, int) = nullptr;
  CUresult (*cuFuncGetAttribute)(int*, CUfunction_attribute, CUfunction) = nullptr;
  CUresult (*cuLaunchKernelEx)(const CUlaunchConfig*, CUfunction, void**, void**) = nullptr;
  CUresult (*cuTensorMapEncodeTiled)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*,
                                     const cuuint64_t*, const cuuint32_t*, const cuuint32_t*, CUtensorMapInterleave,
                                     CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill) = nullptr;
  CUresult (*cuGetErrorName)(CUresult, const char**) = nullptr;
};

// Throws tessera::Error when an entry point is missing.
const DriverApi& driver();
// "CUDA_ERROR_INVALID_VALUE" etc., via the driver when it is there.
const char* driver_error_name(CUresult r);

}  // namespace tessera::gpu
