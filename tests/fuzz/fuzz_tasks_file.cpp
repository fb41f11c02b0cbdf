// A task file (datasets/*.json, --tasks): only bad_input naming the file.
#include "core/tasks_file.hpp"
#include "tests/fuzz/fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto path = tessera::fuzz::scratch_dir() / "tasks.json";
  tessera::fuzz::write_file(path, tessera::fuzz::as_string(data, size));
  tessera::fuzz::expect_input_errors_only([&] {
    for (const auto& t : tessera::load_tasks_file(path)) tessera::validate(t);
  });
  return 0;
}
