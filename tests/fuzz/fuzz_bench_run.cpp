// A bench run folder as `bench report`, `bench suite --resume` and `tile model
// train|eval` read it: bench.json and results.jsonl, each from one part of the
// input (separated by a NUL byte). The run is loaded, its records' sweeps read
// as training rows, the search-against-tune comparison drawn from them and the
// report's Markdown written. Only bad_input may come out.
#include "bench/model_data.hpp"
#include "bench/report.hpp"
#include "bench/run.hpp"
#include "bench/search_vs_tune.hpp"
#include "tests/fuzz/fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tessera;
  const std::string_view nul("\0", 1);
  const auto [config, results] = fuzz::split_once(fuzz::as_string(data, size), nul);
  const auto dir = fuzz::scratch_dir() / "bench";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  fuzz::write_file(dir / bench::kConfigFile, config);
  fuzz::write_file(dir / bench::kResultsFile, results);
  // load_run names a malformed record (bad_input, or a JSON error it reports as
  // one); what reads a loaded run does so leniently: no JSON error may escape.
  fuzz::expect_input_errors_only([&] {
    const bench::Run run = bench::load_run(dir);
    fuzz::expect_clear_errors_only([&] { (void)bench::read_model_data({dir}); });
    fuzz::expect_clear_errors_only([&] { (void)bench::search_vs_tune(run); });
    fuzz::expect_clear_errors_only([&] {
      const bench::ReportOptions options;
      (void)bench::report_markdown(bench::report_data(run, options), options);
    });
  });
  return 0;
}
