#include "worker/baselines/autotune_cache.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "core/error.hpp"
#include "core/fs.hpp"
#include "core/hash.hpp"
#include "core/json_read.hpp"

namespace tessera::baselines {

std::string CacheKey::canonical() const {
  return fmt::format("v{}|{}|{}|{}|{}|lt{}|ws{}|algos{}|align{}", kAutotuneCacheVersion, gpu_name, gpu_uuid, task_id,
                     dtype, cublaslt_version, workspace_bytes, max_algos, alignment);
}

std::string CacheKey::file_name() const {
  return fmt::format("{}_{}.json", task_id, content_hash(canonical()).substr(0, 16));
}

namespace {

constexpr const char* kDigestField = "digest";

// Of the entry without its digest field; object keys are sorted in a dump,
// so the text (and the hash) does not depend on the file's layout.
std::string digest_of(nlohmann::json j) {
  j.erase(kDigestField);
  return content_hash(j.dump());
}

}  // namespace

bool digest_matches(const nlohmann::json& j) {
  if (!j.is_object()) return false;
  const auto it = j.find(kDigestField);
  return it != j.end() && it->is_string() && *it == digest_of(j);
}

nlohmann::json to_json(const CacheKey& key, const AutotuneEntry& e) {
  // Algorithm words as hex strings: exact in any JSON reader (no float64 rounding).
  nlohmann::json words = nlohmann::json::array();
  for (std::uint64_t w : e.algo_words) words.push_back(fmt::format("{:016x}", w));
  nlohmann::json j = {{"version", kAutotuneCacheVersion},
          {"key", key.canonical()},
          {"gpu", key.gpu_name},
          {"task", key.task_id},
          {"algo_words", words},
          {"algo", e.algo_desc},
          {"median_us", e.median_us},
          {"algos_tried", e.algos_tried},
          {"tuned_at", e.tuned_at},
          {"last_times_us", e.last_times_us}};
  j[kDigestField] = digest_of(j);
  return j;
}

std::optional<AutotuneEntry> entry_from_json(const nlohmann::json& j, const CacheKey& key) {
  try {
    if (!j.is_object() || integer_or(j, "version", 0) != kAutotuneCacheVersion || !digest_matches(j)) return std::nullopt;
    if (j.value("key", std::string()) != key.canonical()) return std::nullopt;
    const auto& words = j.at("algo_words");
    AutotuneEntry e;
    if (!words.is_array() || words.size() != e.algo_words.size()) return std::nullopt;
    for (std::size_t i = 0; i < e.algo_words.size(); ++i) {
      const std::string s = words[i].get<std::string>();
      std::size_t used = 0;
      e.algo_words[i] = std::stoull(s, &used, 16);
      if (used != s.size()) return std::nullopt;
    }
    e.algo_desc = j.value("algo", std::string());
    e.median_us = j.value("median_us", 0.0);
    e.algos_tried = integer_value<int>(j, "algos_tried", 0);
    e.tuned_at = j.value("tuned_at", std::string());
    if (j.contains("last_times_us") && j.at("last_times_us").is_object()) e.last_times_us = j.at("last_times_us");
    return e;
  } catch (const std::exception&) {
    return std::nullopt;  // corrupt entry: a miss
  }
}

AutotuneCache::AutotuneCache(std::filesystem::path dir) : dir_(std::move(dir)) {}

std::optional<AutotuneEntry> AutotuneCache::load(const CacheKey& key) const {
  const auto path = path_for(key);
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return std::nullopt;
  try {
    const auto j = nlohmann::json::parse(read_file(path));
    if (j.is_object() && integer_or(j, "version", 0) == kAutotuneCacheVersion && !digest_matches(j)) {
      spdlog::warn("ignoring baseline cache entry {}: its digest does not match its content (edited or damaged); "
                   "the baselines are measured again",
                   path.string());
      return std::nullopt;
    }
    return entry_from_json(j, key);
  } catch (const std::exception& ex) {
    spdlog::warn("ignoring unreadable baseline cache entry {}: {}", path.string(), ex.what());
    return std::nullopt;
  }
}

bool AutotuneCache::store(const CacheKey& key, const AutotuneEntry& entry) const {
  const auto path = path_for(key);
  try {
    std::filesystem::create_directories(dir_);
    atomic_write_file(path, to_json(key, entry).dump(2) + "\n");
    return true;
  } catch (const std::exception& ex) {
    spdlog::warn("could not write baseline cache entry {}: {}", path.string(), ex.what());
    return false;
  }
}

std::string injection_library(std::istream& maps) {
  std::string line;
  while (std::getline(maps, line)) {
    const auto slash = line.rfind('/');
    if (slash == std::string::npos) continue;  // anonymous, [heap], [stack] ...
    std::string name = line.substr(slash + 1);
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char ch) { return char(std::tolower(ch)); });
    if (name.find("injection") != std::string::npos) return line.substr(line.find('/'));
  }
  return {};
}

std::string attached_profiler() {
  if (const char* lib = std::getenv("CUDA_INJECTION64_PATH"); lib && *lib) return lib;
  std::ifstream maps("/proc/self/maps");
  return injection_library(maps);
}

}  // namespace tessera::baselines
