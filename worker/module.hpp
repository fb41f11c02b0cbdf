#pragma once
// An owned CUmodule, loaded from an image in memory (a cubin, or the fatbin
// of a translation unit's shared object). A module the driver refuses is the
// candidate's launch_error.
#include <cuda.h>

#include <string>

#include <fmt/format.h>

#include "worker/candidate_runtime.hpp"
#include "worker/driver.hpp"

namespace tessera::worker {

inline CandidateFault launch_fault(const std::string& what, CUresult r) {
  return {Status::launch_error, fmt::format("{}: {}", what, driver_error_name(r))};
}

// What the driver reports of a loaded kernel: registers, static shared memory,
// local memory per thread and the most threads per block (-1 where it does not
// say); dynamic shared memory is the launch's, not the function's.
inline Resources function_resources(CUfunction fn) {
  auto attr = [&](CUfunction_attribute a) {
    int v = -1;
    return driver().cuFuncGetAttribute(&v, a, fn) == CUDA_SUCCESS ? v : -1;
  };
  Resources res;
  res.registers = attr(CU_FUNC_ATTRIBUTE_NUM_REGS);
  res.static_smem_bytes = attr(CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES);
  res.local_bytes = attr(CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES);
  res.max_threads_per_block = attr(CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
  return res;
}

class Module {
public:
  explicit Module(const std::string& image) {
    CUresult r = driver().cuModuleLoadData(&m_, image.data());
    if (r != CUDA_SUCCESS) throw launch_fault("cannot load the module", r);
  }
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;
  ~Module() noexcept {
    if (m_) driver().cuModuleUnload(m_);
  }
  CUmodule get() const { return m_; }

private:
  CUmodule m_ = nullptr;
};

}  // namespace tessera::worker
