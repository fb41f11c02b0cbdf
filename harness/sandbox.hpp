#pragma once
// The sandboxed evaluator: every candidate runs in a worker process
// (`tessera __worker`). A crash, trap, illegal address or hang kills only the
// worker; the result says runtime_fault/timeout and the next candidate gets a
// fresh, healthy worker. Workers are reused while healthy. Its options,
// SandboxOptions, are a wire struct (core/wire.hpp): command lines, Python
// and `tessera serve` set them through the same reader.
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/wire.hpp"
#include "harness/evaluator.hpp"

namespace tessera {

inline constexpr double kWorkerStartTimeoutSeconds = 60.0;  // context creation + baselines setup

std::unique_ptr<Evaluator> make_evaluator(const SandboxOptions& options);

// The extra shapes a shape-generic candidate is verified on: about half the
// task's size plus an odd offset (no tile divides it; K kept a multiple of 8
// so 16-byte rows stay legal), and a small 64x128x256.
std::vector<std::array<std::int64_t, 3>> shape_generic_probes(const Task& task);

// True when the CUDA runtime sees at least one device (no context is created).
bool gpu_present(std::string* reason = nullptr);
// The devices the CUDA runtime sees; 0 when it sees none or cannot tell.
int cuda_device_count();

}  // namespace tessera
