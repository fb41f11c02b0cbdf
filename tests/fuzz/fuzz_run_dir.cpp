// A run directory as `tessera search --resume` and the report read it:
// config.json, trajectories.jsonl and state.json, each from one part of the
// input (parts separated by a NUL byte), then the report written from them.
// Only bad_input may come out.
#include "search/engine.hpp"
#include "search/report.hpp"
#include "tests/fuzz/fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tessera;
  const std::string_view nul("\0", 1);
  const auto [config, rest] = fuzz::split_once(fuzz::as_string(data, size), nul);
  const auto [trajectories, state] = fuzz::split_once(rest, nul);
  const auto dir = fuzz::scratch_dir() / "run";
  std::filesystem::create_directories(dir);
  fuzz::write_file(dir / "config.json", config);
  fuzz::write_file(dir / "trajectories.jsonl", trajectories);
  fuzz::write_file(dir / "state.json", state);
  fuzz::expect_input_errors_only([&] { (void)search::load_run_config(dir); });
  fuzz::expect_input_errors_only([&] {
    const search::RunView run = search::load_run(dir);
    (void)search::final_summary(run);
    (void)search::write_report(run);  // report.md and its plots, the tile moves' section among them
  });
  return 0;
}
