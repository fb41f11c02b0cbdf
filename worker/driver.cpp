#include "worker/driver.hpp"

#include <cuda_runtime_api.h>

#include <fmt/format.h>

#include "worker/check.hpp"

namespace tessera::worker {

namespace {
constexpr int kDriverApiVersion = 12000;  // the ABI version of the entry points we ask for

template <class Fn>
void fetch(Fn& fn, const char* name, int version = kDriverApiVersion) {
  void* p = nullptr;
  cudaDriverEntryPointQueryResult q{};
  cudaError_t e = cudaGetDriverEntryPointByVersion(name, &p, version, cudaEnableDefault, &q);
  if (e != cudaSuccess || q != cudaDriverEntryPointSuccess || p == nullptr)
    throw Error(Error::Kind::unavailable, fmt::format("driver entry point {} unavailable ({})", name,
                                                      cudaGetErrorString(e)));
  fn = reinterpret_cast<Fn>(p);
}
}  // namespace

const DriverApi& driver() {
  static const DriverApi api = [] {
    DriverApi a;
    fetch(a.cuModuleLoadData, "cuModuleLoadData");
    fetch(a.cuModuleUnload, "cuModuleUnload");
    fetch(a.cuModuleGetFunction, "cuModuleGetFunction");
    fetch(a.cuFuncSetAttribute, "cuFuncSetAttribute");
    fetch(a.cuFuncGetAttribute, "cuFuncGetAttribute");
    fetch(a.cuLaunchKernelEx, "cuLaunchKernelEx");
    fetch(a.cuOccupancyMaxActiveClusters, "cuOccupancyMaxActiveClusters");
    fetch(a.cuTensorMapEncodeTiled, "cuTensorMapEncodeTiled");
    fetch(a.cuGetErrorName, "cuGetErrorName");
    fetch(a.cuMemAddressReserve, "cuMemAddressReserve");
    fetch(a.cuMemAddressFree, "cuMemAddressFree");
    fetch(a.cuMemCreate, "cuMemCreate");
    fetch(a.cuMemRelease, "cuMemRelease");
    fetch(a.cuMemMap, "cuMemMap");
    fetch(a.cuMemUnmap, "cuMemUnmap");
    fetch(a.cuMemSetAccess, "cuMemSetAccess");
    fetch(a.cuMemGetAllocationGranularity, "cuMemGetAllocationGranularity");
    fetch(a.cuFuncGetName, "cuFuncGetName", 12030);
    fetch(a.cuFuncGetParamInfo, "cuFuncGetParamInfo", 12040);
    fetch(a.cuModuleGetFunctionCount, "cuModuleGetFunctionCount", 12040);
    fetch(a.cuModuleEnumerateFunctions, "cuModuleEnumerateFunctions", 12040);
    fetch(a.cuGraphKernelNodeGetParams, "cuGraphKernelNodeGetParams");
    fetch(a.cuGraphKernelNodeGetAttribute, "cuGraphKernelNodeGetAttribute");
    fetch(a.cuMemsetD8Async, "cuMemsetD8Async");
    fetch(a.cuMemsetD16Async, "cuMemsetD16Async");
    fetch(a.cuMemsetD32Async, "cuMemsetD32Async");
    fetch(a.cuMemsetD2D8Async, "cuMemsetD2D8Async");
    fetch(a.cuMemsetD2D16Async, "cuMemsetD2D16Async");
    fetch(a.cuMemsetD2D32Async, "cuMemsetD2D32Async");
    return a;
  }();
  return api;
}

const char* driver_error_name(CUresult r) {
  const char* s = nullptr;
  try {
    if (driver().cuGetErrorName(r, &s) == CUDA_SUCCESS && s) return s;
  } catch (const Error&) {
  }
  return cu_result_name(r);
}

}  // namespace tessera::worker
