#pragma once
// Shared by the fuzz targets. A target feeds outside data to a parser and
// accepts only the parser's documented failures: tessera::Error of kind
// bad_input or unavailable (a clear error for the user) and, where the caller
// turns them into such an error, nlohmann::json exceptions. Anything else (an
// internal Error, std::out_of_range, a sanitizer report, a crash, a hang)
// escapes and is a finding.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace tessera::fuzz {

inline std::string as_string(const std::uint8_t* data, std::size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

// Runs `f`; only a user-facing Error may come out (an internal one is a
// tessera bug, not bad input). For readers that read records leniently.
template <class F>
void expect_clear_errors_only(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    if (e.kind() == Error::Kind::internal) throw;
  }
}

// The same, and a JSON exception too: the callers of these parsers report
// them as bad input (one line).
template <class F>
void expect_input_errors_only(F&& f) {
  try {
    expect_clear_errors_only(f);
  } catch (const nlohmann::json::exception&) {
  }
}

// Splits `text` at the first `sep`: {before, after}; after is empty when absent.
inline std::pair<std::string, std::string> split_once(const std::string& text, std::string_view sep) {
  const auto at = text.find(sep);
  if (at == std::string::npos) return {text, {}};
  return {text.substr(0, at), text.substr(at + sep.size())};
}

// A private directory for parsers that read files, removed at exit.
const std::filesystem::path& scratch_dir();

// Writes `bytes` to `path` exactly (binary, truncated): a parser's input file.
void write_file(const std::filesystem::path& path, std::string_view bytes);

}  // namespace tessera::fuzz
