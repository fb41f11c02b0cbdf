#include "tile/emit.hpp"

#include <fmt/format.h>

#include "core/error.hpp"
#include "tile/detail/emit.hpp"
#include "tile/legality.hpp"

namespace tessera::tile {

std::string minimum_arch(const Config& config) {
  return config.backend == Backend::wgmma_tma ? "sm_90a" : "sm_80";
}

std::string emit(const Config& config, const Task& task) {
  validate(task);
  Limits limits;
  limits.arch = minimum_arch(config);
  if (const auto legal = legality(config, task, limits); !legal)
    fail_bad_input(fmt::format("tile config {} cannot run {}: {}", name(config), task.id(), legal.reason));
  return config.backend == Backend::wgmma_tma ? detail::emit_wgmma(config, task) : detail::emit_mma_sync(config, task);
}

}  // namespace tessera::tile
