#pragma once
// Parsing what a model wrote: fenced code blocks, SEARCH/REPLACE diffs applied
// to the parent source, and tile-config mutation JSON. Parse failures are
// data (ok == false with a one-line reason), never exceptions.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace tessera::agent {

struct CodeBlock {
  std::string lang;  // info string's first word, lower case ("cuda", "cpp", "" ...)
  std::string body;
  bool closed = true;  // false: the reply ended inside the block (cut off at max_tokens)
};

std::vector<CodeBlock> extract_code_blocks(const std::string& text);

// The block that holds the kernel: among closed blocks without diff markers,
// prefer cuda/cu/cpp/c++/cuh blocks that mention tessera_hgemm or
// tessera_launch, then any block that does, then the largest cuda/cpp block,
// then the largest block. nullopt when there is none.
std::optional<CodeBlock> select_kernel_block(const std::vector<CodeBlock>& blocks);

struct DiffBlock {
  std::string search;
  std::string replace;
};

// <<<<<<< SEARCH / ======= / >>>>>>> REPLACE blocks anywhere in the text
// (inside or outside fences). Markers need at least 5 of their characters.
std::vector<DiffBlock> extract_diff_blocks(const std::string& text);

struct ApplyResult {
  bool ok = false;
  std::string source;
  std::string error;
  int fuzzy_matches = 0;  // blocks matched only after whitespace normalisation
};

// Applies blocks in order. Each SEARCH must match: exactly first, then line by
// line ignoring trailing whitespace, then ignoring indentation (the replacement
// is re-indented by the difference). The first match wins.
ApplyResult apply_diff(const std::string& parent, const std::vector<DiffBlock>& blocks);

struct ParsedAction {
  bool ok = false;
  std::string error;
  std::string kind;    // "diff" | "full_source"
  std::string action;  // the diff text (all blocks) or the full source
  std::string source;  // the resulting kernel source
};

// A reply with SEARCH/REPLACE blocks is a diff (needs a parent); otherwise a
// kernel code block is a full source.
ParsedAction parse_kernel_reply(const std::string& reply, const std::optional<std::string>& parent_source);

// Structured tile-config mutation: the first ```json block that parses to an
// object, else the first balanced {...} in the text that does. Interpreting
// it is the tile proposer's job.
std::optional<nlohmann::json> extract_json_object(const std::string& text);

}  // namespace tessera::agent
