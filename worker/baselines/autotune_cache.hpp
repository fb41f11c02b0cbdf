#pragma once
// The autotune cache: which cuBLASLt algorithm won for one (GPU, task,
// cuBLASLt version, workspace, search width). It stores the choice so that
// autotuning is not redone every run, plus past times for display only: a
// speedup always uses times measured in the current run.
#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <istream>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace tessera::baselines {

// Bump when the entry format or how the choice is made changes (2: digest;
// 3: chosen by two interleaved rounds, BaselineSuite::prepare).
inline constexpr int kAutotuneCacheVersion = 3;

struct CacheKey {
  std::string gpu_name;
  std::string gpu_uuid;  // hex
  std::string task_id;   // Task::id(): op, shape, layout, epilogue
  std::string dtype = "f16_f16_f32acc";
  std::size_t cublaslt_version = 0;
  std::size_t workspace_bytes = 0;
  int max_algos = 0;
  std::string alignment;  // operand pointer alignments in bytes, "B/A/C" as cuBLASLt sees them

  std::string canonical() const;  // every field, in order
  std::string file_name() const;  // "<task_id>_<hash>.json"
};

struct AutotuneEntry {
  std::array<std::uint64_t, 8> algo_words{};  // cublasLtMatmulAlgo_t::data
  std::string algo_desc;
  double median_us = 0;  // at autotune time, display only
  int algos_tried = 0;
  std::string tuned_at;  // ISO-8601 UTC
  nlohmann::json last_times_us = nlohmann::json::object();  // name -> cold median of the last run, display only
};

// The entry with a "digest" field: the content hash of everything else in it.
nlohmann::json to_json(const CacheKey& key, const AutotuneEntry& entry);
// nullopt when the JSON is not an entry for exactly this key (stale, corrupt,
// other version) or its digest does not match (edited: a slowed baseline
// would inflate every later speedup).
std::optional<AutotuneEntry> entry_from_json(const nlohmann::json& j, const CacheKey& key);
// True when `j` carries a digest and it matches the rest of `j`.
bool digest_matches(const nlohmann::json& j);

// The injection library of a profiler attached to this process, or empty:
// CUDA_INJECTION64_PATH (how Nsight Systems and Compute load), else a library
// mapped into the process whose name says "injection" (an `ncu` run whose
// autotune still found that variable unset: Nsight Compute's launcher can load
// its libraries and leave no variable behind). Under one, launches are
// serialised and replayed, so an autotune measures the algorithms wrongly: its
// choice serves that run and is not cached (one `ncu ... tessera baseline`
// cached, for later runs, a kernel 14% slower than the one autotuning found
// without the profiler).
std::string attached_profiler();
// The first mapping in `maps` (/proc/<pid>/maps's format) of a library whose
// file name contains "injection" (any case), or empty.
std::string injection_library(std::istream& maps);

class AutotuneCache {
public:
  explicit AutotuneCache(std::filesystem::path dir);
  // Missing, unreadable or tampered entries are a miss (re-measured), never
  // an error; a tampered one is logged.
  std::optional<AutotuneEntry> load(const CacheKey& key) const;
  // Atomic (temp file + rename). A failure to write is logged, not thrown:
  // a read-only cache must not stop an evaluation.
  bool store(const CacheKey& key, const AutotuneEntry& entry) const;
  std::filesystem::path path_for(const CacheKey& key) const { return dir_ / key.file_name(); }

private:
  std::filesystem::path dir_;
};

}  // namespace tessera::baselines
