#pragma once
// Loads a compiled candidate inside the worker and launches it per the ABI.
#include <cuda_runtime_api.h>

#include <filesystem>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "core/abi/tessera_abi.cuh"
#include "core/candidate.hpp"
#include "core/result.hpp"
#include "core/task.hpp"

namespace tessera::worker {

// A candidate's own failure to load or launch (not a tessera bug).
struct CandidateFault {
  Status status;  // launch_error, runtime_fault, rejected; infra_error for a machine failure noticed mid-run
  std::string reason;
};

class GemmCallable {
public:
  virtual ~GemmCallable() = default;
  // Enqueues one call on `stream`. Throws CandidateFault when the launch is refused.
  virtual void launch(const TesseraGemmParams& params, cudaStream_t stream) = 0;
  virtual unsigned long long workspace_bytes(const Task& task) const = 0;
  virtual Resources resources() const = 0;  // from the loaded function (-1 where unknown)
  // Fills the tensor maps the contract asks for (device-only candidates).
  virtual void prepare_params(TesseraGemmParams& params) const = 0;
};

// Throws CandidateFault.
std::unique_ptr<GemmCallable> load_gemm_callable(CandidateKind kind, const std::filesystem::path& artifact,
                                                 const nlohmann::json& contract, const Task& task);

// Classifies a CUDA error raised while a candidate ran: a machine failure
// (ECC, the GPU unavailable) is infra_error, a sticky error runtime_fault,
// anything else launch_error.
CandidateFault classify_cuda_error(cudaError_t e, const std::string& where);
bool is_machine_failure(cudaError_t e);
bool is_sticky(cudaError_t e);

}  // namespace tessera::worker
