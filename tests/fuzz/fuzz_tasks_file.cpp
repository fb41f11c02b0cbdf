// A task file (datasets/*.json, --tasks): only bad_input naming the file.
#include <fstream>

#include "core/tasks_file.hpp"
#include "tests/fuzz/fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto path = tessera::fuzz::scratch_dir() / "tasks.json";
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  tessera::fuzz::expect_input_errors_only([&] {
    for (const auto& t : tessera::load_tasks_file(path)) tessera::validate(t);
  });
  return 0;
}
