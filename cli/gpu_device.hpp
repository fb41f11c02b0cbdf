#pragma once
// For the commands that run kernels in this process (baseline, bench floor).
#include <cuda_runtime_api.h>

#include <optional>

namespace tessera::cli {

// Selects CUDA device `device` and returns its properties. With no usable GPU
// it prints "error: no CUDA GPU: <why>", sets exit code 2 and returns nothing;
// an ordinal the machine does not have is bad input.
std::optional<cudaDeviceProp> open_device(int device);

}  // namespace tessera::cli
