#pragma once
// Post-training data from a run's trajectories (docs/trajectory-schema.md):
//   sft: {"messages": [...], ...}  one line per successful improving step
//   dpo: {"prompt": [...], "chosen": [...], "rejected": [...], ...}  pairs of
//        attempts from the same parent kernel, the faster one chosen
//   rl:  one line per step with the prompt, the completion and the reward
// Every line of a format has the same keys with the same JSON types (no
// nulls), so the Hugging Face `datasets` JSON loader reads the files as is.
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace tessera::search {

inline constexpr int kMaxPairsPerParent = 4;  // dpo: pairs drawn from one parent's children

struct ExportResult {
  std::filesystem::path path;
  long long lines = 0;
  long long records = 0;  // trajectory records read
  std::string empty_reason;  // when lines == 0: why the records gave none (empty_export_reason)
};

// format: sft | dpo | rl. out empty: runs/<id>/export/<format>.jsonl. Throws bad_input.
ExportResult export_run(const std::filesystem::path& run_dir, const std::string& format,
                        const std::filesystem::path& out = {});

// The lines themselves (for tests and other writers).
std::vector<nlohmann::json> export_lines(const std::vector<nlohmann::json>& records, const std::string& format);

// Why `format` has no line for these records, in one sentence a user can act on.
std::string empty_export_reason(const std::vector<nlohmann::json>& records, const std::string& format);

}  // namespace tessera::search
