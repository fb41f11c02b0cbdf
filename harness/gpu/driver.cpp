#include "harness/gpu/driver.hpp"

#include <cuda_runtime_api.h>

#include <fmt/format.h>

#include "harness/gpu/check.hpp"

namespace tessera::gpu {

namespace {
constexpr int kDriverApiVersion = 12000;  // the ABI version of the entry points we ask for

template <class Fn>
void fetch(Fn& fn, const char* name) {
  void* p = nullptr;
  cudaDriverEntryPointQueryResult q{};
  cudaError_t e = cudaGetDriverEntryPointByVersion(name, &p, kDriverApiVersion, cudaEnableDefault, &q);
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
    fetch(a.cuTensorMapEncodeTiled, "cuTensorMapEncodeTiled");
    fetch(a.cuGetErrorName, "cuGetErrorName");
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

}  // namespace tessera::gpu
