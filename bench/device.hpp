#pragma once
// For the measurements that run kernels in this process rather than in a
// sandbox worker (`tessera baseline`, `bench floor`, `bench protocol`), and
// for doctor's check of the hardware counters.
#include <cuda_runtime_api.h>

#include <string>

namespace tessera::bench {

// Selects CUDA device `device` and returns its properties. With no usable GPU
// it throws Error(unavailable, "no CUDA GPU: <why>"); an ordinal the machine
// does not have is bad input.
cudaDeviceProp open_device(int device);

// Empty when CUPTI can read a basic metric on the current device; else why not.
std::string counters_unreadable_reason();

}  // namespace tessera::bench
