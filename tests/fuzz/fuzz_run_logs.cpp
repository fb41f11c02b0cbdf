// A run's JSONL logs (trajectories.jsonl, outcomes.jsonl) as --resume reads
// them: the good prefix of the file, each record read back as a step outcome,
// and the decision view resume compares.
#include "search/step.hpp"
#include "search/trajectory.hpp"
#include "tests/fuzz/fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tessera;
  const auto path = fuzz::scratch_dir() / "log.jsonl";
  fuzz::write_file(path, fuzz::as_string(data, size));
  std::size_t good = 0;
  const auto records = search::read_jsonl(path, &good);
  if (good > size) std::abort();
  for (const auto& r : records) {
    fuzz::expect_input_errors_only([&] { (void)search::outcome_from_json(r); });
    fuzz::expect_input_errors_only([&] { (void)search::decision_view(r).dump(); });
  }
  return 0;
}
