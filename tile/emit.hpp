#pragma once
// The emitter: tile config + task -> readable, device-only CUDA source that
// follows the candidate ABI (core/abi/tessera_abi.cuh).
#include <optional>
#include <string>

#include "core/task.hpp"
#include "tile/config.hpp"

namespace tessera::tile {

// Throws bad_input (with the legality reason) when the config cannot run the task.
// The kernel reads M, N, K from its parameters; the task fixes the layout, the
// epilogue, the alignment fast paths (K % 8, N % 8) and, for split-K, the
// workspace size.
std::string emit(const Config& config, const Task& task);

// The config a source was emitted from for `task`: the one its "// config:"
// line names, when emitting that config for the task gives the source back
// byte for byte; nullopt for any other source (hand-written, edited, emitted
// for another task or by another version of the emitter), so a measurement of
// it is never filed under a config it does not run.
std::optional<Config> emitted_config(const std::string& source, const Task& task);

// The architecture the source is written for: sm_90a (wgmma_tma) or sm_80 (mma_sync).
std::string minimum_arch(const Config& config);

}  // namespace tessera::tile
