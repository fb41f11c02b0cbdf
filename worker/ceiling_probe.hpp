#pragma once
// Measures what the device can do (the ceiling a result is checked against,
// core/ceiling.hpp): the tensor peak (the best cuBLAS/cuBLASLt over
// large square GEMMs), the DRAM bandwidth (a streaming copy) and the floor (an
// empty kernel), all cold, under the same timer as every result.
#include <cuda_runtime_api.h>

#include <nlohmann/json.hpp>

#include "worker/timing.hpp"

namespace tessera::worker {

// {"peak_tflops", "peak_source", "dram_gbps", "floor_us"}. Takes tens of seconds.
nlohmann::json measure_ceiling(Timer& timer, cudaStream_t stream, int sm_count);

}  // namespace tessera::worker
