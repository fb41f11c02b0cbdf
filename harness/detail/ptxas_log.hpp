#pragma once
#include <string>

#include "core/result.hpp"

namespace tessera::detail {
// Reads registers, shared memory, stack frame and spills from a `ptxas -v`
// report, for the function named `entry` (the first function when empty).
Resources parse_ptxas_resources(const std::string& log, const std::string& entry);
// Keeps the head and the tail of a long log, marking what was cut.
std::string trim_log(const std::string& log, std::size_t limit);
}  // namespace tessera::detail
