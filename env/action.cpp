// Text -> kernel (env.hpp: parse_action). The agent's parser does the
// extraction and the fuzzy diff application; this file decides which of the
// environment's action forms a reply is, and whether the action space allows it.
#include <algorithm>
#include <exception>
#include <optional>

#include <fmt/format.h>

#include "agent/parse.hpp"
#include "env/env.hpp"
#include "core/error.hpp"
#include "tile/config.hpp"
#include "tile/emit.hpp"
#include "tile/space.hpp"

namespace tessera::env {

namespace {

constexpr const char* kTileMetaKey = "tile_config";  // as the tile proposer's candidates carry it

bool mentions_entry(const std::string& text) {
  return text.find("tessera_hgemm") != std::string::npos || text.find("tessera_launch") != std::string::npos;
}

// A line of 5 to 9 '<' and then SEARCH (the agent's marker), found without a
// regex: std::regex recurses per character and a long reply would overflow
// the stack.
bool has_diff_marker(const std::string& text) {
  std::size_t pos = 0;
  while (pos <= text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    std::size_t i = text.find_first_not_of(" \t", pos);
    if (i != std::string::npos && i < end) {
      const std::size_t lt = text.find_first_not_of('<', i);
      const std::size_t n = (lt == std::string::npos ? text.size() : lt) - i;
      if (n >= 5 && n <= 9) {
        const std::size_t w = text.find_first_not_of(" \t", i + n);
        if (w != std::string::npos && text.compare(w, 6, "SEARCH") == 0) {
          const std::size_t rest = text.find_first_not_of(" \t\r", w + 6);
          if (rest == std::string::npos || rest >= end) return true;
        }
      }
    }
    pos = end + 1;
  }
  return false;
}

bool has_kernel_block(const std::string& text) {
  for (const auto& b : agent::extract_code_blocks(text))
    if (b.lang != "json" && mentions_entry(b.body)) return true;
  return false;
}

// Reasoning that some servers leave inline comes before the answer.
std::string after_reasoning(const std::string& text) {
  const auto end = text.rfind("</think>");
  return end == std::string::npos ? text : text.substr(end + 8);
}

// The longest run of the characters a regex's \s matches. The agent's parser
// and the harness's kind detection use std::regex, whose matcher recurses once
// per character of a \s* run: a run of tens of thousands of blanks overflows
// the stack and takes the process down.
std::size_t longest_blank_run(const std::string& text) {
  std::size_t longest = 0, run = 0;
  for (const char c : text) {
    run = (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') ? run + 1 : 0;
    longest = std::max(longest, run);
  }
  return longest;
}

// Why a reply cannot be handed to the parsers at all, or "".
std::string unreadable(const std::string& answer) {
  if (answer.find("<think>") != std::string::npos)
    return "the reply ends inside a <think> block (cut off at the token limit?); put the kernel after </think>";
  if (const auto run = longest_blank_run(answer); run > kMaxBlankRun)
    return fmt::format("the reply has a run of {} blank characters; the limit is {}", run, kMaxBlankRun);
  return {};
}

// A ```json block that is an object, else the span from the first '{' to the
// last '}' if it parses as one (a config with prose around it). Linear in the
// reply's length, whatever the policy writes.
std::optional<nlohmann::json> json_object(const std::string& text) {
  const auto blocks = agent::extract_code_blocks(text);
  for (const auto& b : blocks) {
    if (b.lang != "json" || !b.closed) continue;
    auto j = nlohmann::json::parse(b.body, nullptr, false);
    if (!j.is_discarded() && j.is_object()) return j;
  }
  // Braces in prose, not in code: "{}" of a C body is no config.
  if (!blocks.empty()) return std::nullopt;
  const auto open = text.find('{');
  const auto close = text.rfind('}');
  if (open == std::string::npos || close == std::string::npos || close < open) return std::nullopt;
  auto j = nlohmann::json::parse(text.substr(open, close - open + 1), nullptr, false);
  if (!j.is_discarded() && j.is_object() && !j.empty()) return j;
  return std::nullopt;
}

ParsedAction failure(std::string kind, std::string error) {
  ParsedAction p;
  p.kind = std::move(kind);
  p.error = std::move(error);
  return p;
}

// The kind of a kernel source, and whether the action space takes it.
ParsedAction kernel(std::string kind, std::string source, const ActionSpace& allowed) {
  CandidateKind ck;
  try {
    ck = detect_kind(source);
  } catch (const std::exception& e) {
    return failure(std::move(kind), e.what());
  }
  if (ck == CandidateKind::translation_unit && !allowed.translation_unit)
    return failure(kind.empty() ? "translation_unit" : kind,
                   "full translation units (tessera_launch) are not accepted here; send a device-only kernel that "
                   "exports tessera_hgemm and tessera_contract");
  if (kind.empty()) {
    kind = to_string(ck);
    if (ck == CandidateKind::device_only && !allowed.device_only)
      return failure(kind, "complete kernels are not accepted here; send a SEARCH/REPLACE diff or a tile config");
  }
  ParsedAction p;
  p.ok = true;
  p.kind = std::move(kind);
  p.candidate.kind = ck;
  p.candidate.source = std::move(source);
  return p;
}

ParsedAction diff_action(const std::string& text, const std::optional<std::string>& previous, const ActionSpace& allowed) {
  if (!allowed.diff) return failure("diff", "SEARCH/REPLACE diffs are not accepted here; send a complete kernel");
  if (!previous)
    return failure("diff", "a SEARCH/REPLACE diff needs a previous kernel to apply to, and there is none yet; send a "
                           "complete kernel first");
  const auto parsed = agent::parse_kernel_reply(text, previous);
  if (!parsed.ok) return failure("diff", parsed.error);
  const auto blocks = agent::extract_diff_blocks(text);
  auto p = kernel("diff", parsed.source, allowed);
  if (p.ok) p.fuzzy_matches = agent::apply_diff(*previous, blocks).fuzzy_matches;
  return p;
}

ParsedAction tile_action(nlohmann::json j, const Task& task, const ActionSpace& allowed, const tile::Limits& limits) {
  if (!allowed.tile_config) return failure("tile_config", "tile configs are not accepted here; send a kernel");
  // {"tile_config": {...}} is how the tile proposer's candidates carry it.
  if (j.size() == 1 && j.contains(kTileMetaKey) && j[kTileMetaKey].is_object()) j = j[kTileMetaKey];
  try {
    tile::Config base;
    base.epilogue = task.epilogue;
    tile::Config c = tile::from_json(j, base);
    tile::canonicalize(c, task);
    if (const auto legal = tile::legality(c, task, limits); !legal)
      return failure("tile_config", "the tile config cannot run this task: " + legal.reason);
    ParsedAction p;
    p.ok = true;
    p.kind = "tile_config";
    p.tile_config = tile::to_json(c);
    p.candidate.kind = CandidateKind::device_only;
    p.candidate.source = tile::emit(c, task);
    p.candidate.name = tile::name(c);
    p.candidate.meta[kTileMetaKey] = p.tile_config;
    return p;
  } catch (const std::exception& e) {
    return failure("tile_config", std::string("bad tile config: ") + e.what());
  }
}

}  // namespace

ParsedAction parse_action(const std::string& text, const std::optional<std::string>& previous_source,
                          const Task& task, const ActionSpace& allowed, const tile::Limits& limits) {
  if (text.size() > kMaxActionChars)
    return failure("", fmt::format("the reply is {} characters long; the limit is {} (a kernel is rarely a tenth of that)",
                                   text.size(), kMaxActionChars));
  try {
    const std::string answer = after_reasoning(text);
    if (auto why = unreadable(answer); !why.empty()) return failure("", why);
    if (has_diff_marker(answer)) return diff_action(answer, previous_source, allowed);
    if (has_kernel_block(answer)) {
      const auto parsed = agent::parse_kernel_reply(answer, std::nullopt);
      if (!parsed.ok) return failure("", parsed.error);
      return kernel("", parsed.source, allowed);
    }
    if (auto j = json_object(answer)) return tile_action(std::move(*j), task, allowed, limits);
    if (mentions_entry(answer)) return kernel("", answer, allowed);
    std::string forms = "a complete kernel in a ```cuda block";
    if (allowed.diff) forms += ", SEARCH/REPLACE blocks against your previous kernel";
    if (allowed.tile_config) forms += ", a tile config as a JSON object";
    return failure("", agent::extract_code_blocks(answer).empty()
                           ? "no kernel found; send " + forms
                           : "no code block defines tessera_hgemm (device-only) or tessera_launch (translation "
                             "unit); send " + forms);
  } catch (const std::exception& e) {
    // Nothing the policy writes may escape as an exception.
    return failure("", std::string("the action could not be read: ") + e.what());
  }
}

}  // namespace tessera::env
