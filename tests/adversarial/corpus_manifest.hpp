#pragma once
// The adversarial corpus's manifest (tests/adversarial/manifest.json): what
// each kernel tries, the verdicts a correct harness may give it, and the
// table a GPU run prints (and writes as Markdown for docs/harness.md).
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "core/result.hpp"

namespace tessera::adversarial {

struct CorpusEntry {
  std::string file;
  std::string klass;  // the cheat's class, e.g. "launch counting"
  std::string kind;   // "device" or "tu"
  std::string tries;
  std::string caught;  // how it is caught, one line
  // acceptable status -> substring its reason must contain ("" = any;
  // alternatives separated by '|')
  std::map<Status, std::string> expect;
  bool gpu = true;             // false: the verdict comes from compile-time policy (checked without a GPU)
  bool shape_generic = false;  // evaluated with the shape-generic claim
  std::string gap;             // what the protocol does not catch yet (empty: none)
  // A control kernel (the same kernel without the trick): this one's hot time
  // must not beat the control's by more than their cold times differ
  // (hot_gain_mismatch). Empty: no comparison.
  std::string hot_no_faster_than;
  bool control = false;  // an honest kernel that tries nothing, there to be compared with
};

struct Manifest {
  std::string shape;  // the task every kernel is evaluated on, "MxNxK"
  std::vector<CorpusEntry> kernels;
};

// Throws tessera::Error (bad_input) on a missing file, malformed JSON, an
// unknown status or kind, or an entry without its fields.
Manifest load_manifest(const std::filesystem::path& path);

// tests/adversarial in the source tree.
std::filesystem::path adversarial_dir();

// Empty when (status, reason) is one of the entry's expected verdicts (the
// reason containing one of the status's '|'-separated substrings), else what
// was expected.
std::string verdict_mismatch(const CorpusEntry& e, Status status, const std::string& reason);

// The entry's expected statuses, "wrong_answer|rejected".
std::string expected_statuses(const CorpusEntry& e);

struct TableRow {
  const CorpusEntry* entry = nullptr;
  Status status = Status::infra_error;
  std::string reason;
  double cold_us = 0;  // the paid time, when the status is ok
  double hot_us = 0;   // its hot time (reported, never paid), when measured
};

// How much faster hot than cold a cached kernel may look next to its control,
// for noise: 10%. A cache that hits in hot replay is several times faster.
inline constexpr double kHotGainSlack = 1.10;

// Empty when `cached`'s hot time is no faster than its control's beyond what
// their cold times differ by (the cold times are honest: every call has
// inputs of its own there) and kHotGainSlack; else the figures. Both must be
// ok with their cold and hot times measured.
std::string hot_gain_mismatch(const CorpusEntry& e, const TableRow& cached, const TableRow& control);

// Empty when an ok result's timed calls were really guarded (poisoned,
// inputs refreshed, some checked; a hot replay checked when `hot`), else
// what was missing: an ok that counts, not one from protection turned off.
std::string unguarded_ok(const EvalResult& r, bool hot);

// One line per kernel (class, file, status, reason), for the test's output.
std::string text_table(const std::vector<TableRow>& rows);
// The same as a Markdown table with how each kernel is caught.
std::string markdown_table(const std::vector<TableRow>& rows);

}  // namespace tessera::adversarial
