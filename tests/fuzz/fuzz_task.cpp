// A task given as JSON (--task, task files, run configs) or as a shape
// string (--shape). Only bad_input may come out; an accepted task is valid
// and survives its own JSON.
#include <cstdlib>

#include "core/task.hpp"
#include "tests/fuzz/fuzz_common.hpp"

namespace {

void check_accepted(const tessera::Task& t) {
  tessera::validate(t);
  if (tessera::parse_task(tessera::to_json(t)).id() != t.id()) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text = tessera::fuzz::as_string(data, size);
  tessera::fuzz::expect_input_errors_only([&] { check_accepted(tessera::parse_task_string(text)); });
  tessera::fuzz::expect_input_errors_only([&] { check_accepted(tessera::task_from_shape(text)); });
  return 0;
}
