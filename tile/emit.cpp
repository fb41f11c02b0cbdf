#include "tile/emit.hpp"

#include <string_view>

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

std::optional<Config> emitted_config(const std::string& source, const Task& task) {
  static constexpr std::string_view kTag = "\n// config: ";
  const auto at = source.find(kTag);
  if (at == std::string::npos) return std::nullopt;
  const auto from = at + kTag.size();
  const std::string config_name = source.substr(from, source.find('\n', from) - from);
  try {
    const Config c = parse_config(config_name);
    if (emit(c, task) == source) return c;
  } catch (const Error&) {  // not a config's name, or a config that cannot run the task
  }
  return std::nullopt;
}

}  // namespace tessera::tile
