#include "agent/cache.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "core/error.hpp"
#include "core/fs.hpp"
#include "core/hash.hpp"

namespace tessera::agent {

std::string to_string(CacheMode m) {
  switch (m) {
    case CacheMode::off: return "off";
    case CacheMode::read_write: return "read_write";
    case CacheMode::replay: return "replay";
  }
  return "off";
}

CacheMode parse_cache_mode(const std::string& s) {
  if (s == "off") return CacheMode::off;
  if (s == "read_write" || s == "rw") return CacheMode::read_write;
  if (s == "replay") return CacheMode::replay;
  fail_bad_input(fmt::format("unknown LLM cache mode '{}' (off, read_write, replay)", s));
}

ResponseCache::ResponseCache(std::filesystem::path dir, CacheMode mode) : dir_(std::move(dir)), mode_(mode) {}

std::filesystem::path ResponseCache::default_dir() { return cache_dir() / "llm"; }

std::string ResponseCache::key(const EndpointConfig& endpoint, const nlohmann::json& body, std::uint64_t sample_index) {
  nlohmann::json canonical = body;
  canonical.erase("stream");
  canonical.erase("stream_options");
  // nlohmann::json objects are key-sorted, so dump() is canonical.
  return Hasher()
      .add("tessera-llm-cache-v1")
      .add(to_string(endpoint.provider))
      .add(endpoint.base_url)
      .add(endpoint.model)
      .add(canonical.dump())
      .add(std::to_string(sample_index))
      .hex();
}

std::filesystem::path ResponseCache::path_of(const std::string& key) const {
  return dir_ / key.substr(0, 2) / (key + ".json");
}

std::optional<ChatResult> ResponseCache::lookup(const std::string& key) const {
  if (mode_ == CacheMode::off) return std::nullopt;
  const auto path = path_of(key);
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return std::nullopt;
  nlohmann::json j = nlohmann::json::parse(read_file(path), nullptr, false);
  if (j.is_discarded() || !j.contains("reply")) {
    spdlog::warn("LLM cache entry {} is unreadable; ignoring it", path.string());
    return std::nullopt;
  }
  const auto& r = j["reply"];
  ChatResult out;
  out.ok = true;
  out.http_status = 200;
  out.content = r.value("content", "");
  out.reasoning = r.value("reasoning", "");
  out.finish_reason = r.value("finish_reason", "");
  out.model = r.value("model", "");
  if (r.contains("usage")) out.usage = r["usage"].get<Usage>();
  out.from_cache = true;
  return out;
}

void ResponseCache::store(const std::string& key, const nlohmann::json& body, const ChatResult& result) const {
  if (mode_ != CacheMode::read_write || !result.ok) return;
  const auto path = path_of(key);
  std::error_code ec;
  std::filesystem::create_directories(path.parent_path(), ec);
  if (ec) throw Error(fmt::format("cannot create LLM cache directory {}: {}", path.parent_path().string(), ec.message()));
  const nlohmann::json entry = {{"key", key},
                                {"recorded_at", utc_now_iso()},
                                {"request", body},
                                {"reply",
                                 {{"content", result.content},
                                  {"reasoning", result.reasoning},
                                  {"finish_reason", result.finish_reason},
                                  {"model", result.model},
                                  {"usage", result.usage}}}};
  atomic_write_file(path, entry.dump(1));
}

}  // namespace tessera::agent
