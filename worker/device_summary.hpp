#pragma once
// What the harness reports about a GPU (name, UUID, SMs, arch, L2, shared
// memory, clock), read from the CUDA runtime. The measured ceiling (peak,
// bandwidth, floor) is added from the per-GPU store by whoever has it.
#include "core/result.hpp"

namespace tessera::worker {

DeviceSummary device_summary(int ordinal);

}  // namespace tessera::worker
