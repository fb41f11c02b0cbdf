#pragma once
// An owned CUmodule, loaded from an image in memory (a cubin, or the fatbin
// of a translation unit's shared object). A module the driver refuses is the
// candidate's launch_error.
#include <cuda.h>

#include <string>

#include <fmt/format.h>

#include "harness/gpu/candidate_runtime.hpp"
#include "harness/gpu/driver.hpp"

namespace tessera::gpu {

inline CandidateFault launch_fault(const std::string& what, CUresult r) {
  return {Status::launch_error, fmt::format("{}: {}", what, driver_error_name(r))};
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

}  // namespace tessera::gpu
