#pragma once
// On-disk cache of LLM replies keyed by (endpoint URL, model, full request
// body, sample index). Reruns and tests replay without the network.
//   off        : never read or write
//   read_write : serve hits, record successful replies on a miss
//   replay     : serve hits; a miss is an error (ChatErrorKind::cache_miss)
#include <filesystem>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "agent/endpoint.hpp"

namespace tessera::agent {

enum class CacheMode { off, read_write, replay };
std::string to_string(CacheMode m);
CacheMode parse_cache_mode(const std::string& s);  // throws bad_input

class ResponseCache {
public:
  // Entries live in dir/<first two hex digits>/<key>.json.
  ResponseCache(std::filesystem::path dir, CacheMode mode);
  // Default directory: tessera::cache_dir() / "llm".
  static std::filesystem::path default_dir();

  CacheMode mode() const { return mode_; }
  const std::filesystem::path& dir() const { return dir_; }

  // The streaming flags are left out of the key: a reply recorded streamed
  // replays unstreamed and vice versa.
  static std::string key(const EndpointConfig& endpoint, const nlohmann::json& body, std::uint64_t sample_index);
  std::optional<ChatResult> lookup(const std::string& key) const;
  void store(const std::string& key, const nlohmann::json& body, const ChatResult& result) const;

private:
  std::filesystem::path path_of(const std::string& key) const;
  std::filesystem::path dir_;
  CacheMode mode_;
};

}  // namespace tessera::agent
