#pragma once
#include <string>

#include "core/result.hpp"

namespace tessera::cli {
// The human table `tessera eval` prints for one result.
std::string format_result(const EvalResult& r);
// Exit code for a set of results: 0 all ok/compiled, 1 a candidate failed, 3 harness failure.
int exit_code_for(Status s);
}  // namespace tessera::cli
