#include "worker/hidden_buffer.hpp"

#include <cuda.h>
#include <cuda_runtime_api.h>

#include <random>
#include <utility>

#include "worker/check.hpp"
#include "worker/driver.hpp"

namespace tessera::worker {

namespace {

CUmemAllocationProp device_prop(int device) {
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = device;
  return prop;
}

}  // namespace

HiddenBuffer::HiddenBuffer(std::size_t bytes, std::uint64_t seed) : bytes_(bytes) {
  if (bytes == 0) return;
  int device = 0;
  TESSERA_CUDA_CHECK(cudaGetDevice(&device));
  const CUmemAllocationProp prop = device_prop(device);
  const DriverApi* api = nullptr;
  std::size_t gran = 0;
  try {
    api = &driver();
    if (api->cuMemGetAllocationGranularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM) != CUDA_SUCCESS) gran = 0;
  } catch (const Error&) {
    gran = 0;
  }
  if (gran == 0 || gran * 4 > kHiddenRangeBytes) {
    TESSERA_CUDA_CHECK(cudaMalloc(&ptr_, bytes));
    return;
  }
  mapped_ = (bytes + gran - 1) / gran * gran;
  const std::size_t slots = (kHiddenRangeBytes - mapped_) / gran;
  CUdeviceptr base = 0;
  if (mapped_ >= kHiddenRangeBytes || api->cuMemAddressReserve(&base, kHiddenRangeBytes, 0, 0, 0) != CUDA_SUCCESS) {
    TESSERA_CUDA_CHECK(cudaMalloc(&ptr_, bytes));
    mapped_ = 0;
    return;
  }
  reserved_ = base;
  CUmemGenericAllocationHandle h{};
  CUresult r = api->cuMemCreate(&h, mapped_, &prop, 0);
  if (r != CUDA_SUCCESS) {
    api->cuMemAddressFree(base, kHiddenRangeBytes);
    reserved_ = 0;
    TESSERA_CU_CHECK(r);
  }
  handle_ = h;
  std::mt19937_64 rng(seed);
  const CUdeviceptr at = base + (rng() % slots) * gran;
  CUmemAccessDesc access{};
  access.location = prop.location;
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  if ((r = api->cuMemMap(at, mapped_, 0, h, 0)) != CUDA_SUCCESS || (r = api->cuMemSetAccess(at, mapped_, &access, 1)) != CUDA_SUCCESS) {
    api->cuMemUnmap(at, mapped_);
    api->cuMemRelease(h);
    api->cuMemAddressFree(base, kHiddenRangeBytes);
    reserved_ = handle_ = 0;
    TESSERA_CU_CHECK(r);
  }
  ptr_ = reinterpret_cast<void*>(at);
}

HiddenBuffer::HiddenBuffer(HiddenBuffer&& o) noexcept
    : ptr_(std::exchange(o.ptr_, nullptr)),
      bytes_(std::exchange(o.bytes_, 0)),
      mapped_(std::exchange(o.mapped_, 0)),
      reserved_(std::exchange(o.reserved_, 0)),
      handle_(std::exchange(o.handle_, 0)) {}

HiddenBuffer& HiddenBuffer::operator=(HiddenBuffer&& o) noexcept {
  if (this != &o) {
    release();
    ptr_ = std::exchange(o.ptr_, nullptr);
    bytes_ = std::exchange(o.bytes_, 0);
    mapped_ = std::exchange(o.mapped_, 0);
    reserved_ = std::exchange(o.reserved_, 0);
    handle_ = std::exchange(o.handle_, 0);
  }
  return *this;
}

HiddenBuffer::~HiddenBuffer() noexcept { release(); }

void HiddenBuffer::release() noexcept {
  if (!ptr_) return;
  if (!reserved_) {
    cudaFree(ptr_);
  } else {
    try {
      const auto& api = driver();
      cudaDeviceSynchronize();  // unmapping memory a kernel still reads would fault it
      api.cuMemUnmap(reinterpret_cast<CUdeviceptr>(ptr_), mapped_);
      api.cuMemRelease(static_cast<CUmemGenericAllocationHandle>(handle_));
      api.cuMemAddressFree(static_cast<CUdeviceptr>(reserved_), kHiddenRangeBytes);
    } catch (...) {
    }
  }
  ptr_ = nullptr;
  reserved_ = handle_ = 0;
}

}  // namespace tessera::worker
