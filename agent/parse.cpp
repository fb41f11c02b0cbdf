#include "agent/parse.hpp"

#include <algorithm>
#include <cctype>
#include <functional>
#include <regex>

#include <fmt/format.h>

namespace tessera::agent {

namespace {
std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(pos, end - pos);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    lines.push_back(std::move(line));
    pos = end + 1;
  }
  return lines;
}

std::string join_lines(const std::vector<std::string>& lines, size_t from, size_t to) {
  std::string out;
  for (size_t i = from; i < to; ++i) out += lines[i] + "\n";
  return out;
}

std::string rtrim(const std::string& s) {
  size_t end = s.find_last_not_of(" \t\r");
  return end == std::string::npos ? std::string() : s.substr(0, end + 1);
}

std::string trim(const std::string& s) {
  size_t begin = s.find_first_not_of(" \t\r");
  return begin == std::string::npos ? std::string() : rtrim(s.substr(begin));
}

std::string indent_of(const std::string& s) { return s.substr(0, s.find_first_not_of(" \t")); }

bool is_blank(const std::string& s) { return trim(s).empty(); }

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  return s;
}

// Reasoning some local servers leave inline in the content.
std::string strip_think(const std::string& text) {
  static const std::regex think(R"(<think>[\s\S]*?</think>)");
  return std::regex_replace(text, think, "");
}

const std::regex& search_marker() {
  static const std::regex r(R"(^\s*<{5,9}\s*SEARCH\s*$)");
  return r;
}
const std::regex& divider_marker() {
  static const std::regex r(R"(^\s*={5,9}\s*$)");
  return r;
}
const std::regex& replace_marker() {
  static const std::regex r(R"(^\s*>{5,9}\s*REPLACE\s*$)");
  return r;
}

bool mentions_entry(const std::string& body) {
  return body.find("tessera_hgemm") != std::string::npos || body.find("tessera_launch") != std::string::npos;
}

bool is_cuda_lang(const std::string& lang) {
  return lang == "cuda" || lang == "cu" || lang == "cuh" || lang == "cpp" || lang == "c++" || lang == "cxx" ||
         lang == "c" || lang == "cc";
}

bool has_diff_markers(const std::string& body) {
  for (const auto& line : split_lines(body))
    if (std::regex_match(line, search_marker())) return true;
  return false;
}

// Finds `needle` lines in `hay` from line `from`, comparing with `norm`.
template <typename Norm>
std::optional<size_t> find_lines(const std::vector<std::string>& hay, const std::vector<std::string>& needle, Norm norm) {
  if (needle.empty() || needle.size() > hay.size()) return std::nullopt;
  for (size_t i = 0; i + needle.size() <= hay.size(); ++i) {
    bool match = true;
    for (size_t k = 0; k < needle.size() && match; ++k) match = norm(hay[i + k]) == norm(needle[k]);
    if (match) return i;
  }
  return std::nullopt;
}

std::vector<std::string> without_blank_edges(std::vector<std::string> lines) {
  while (!lines.empty() && is_blank(lines.front())) lines.erase(lines.begin());
  while (!lines.empty() && is_blank(lines.back())) lines.pop_back();
  return lines;
}

std::string first_nonblank(const std::vector<std::string>& lines) {
  for (const auto& l : lines)
    if (!is_blank(l)) return l;
  return {};
}

// An exact match must start a line: "x = 1;" must not match inside "max = 1;".
size_t find_at_line_start(const std::string& hay, const std::string& needle) {
  for (size_t pos = hay.find(needle); pos != std::string::npos; pos = hay.find(needle, pos + 1))
    if (pos == 0 || hay[pos - 1] == '\n') return pos;
  return std::string::npos;
}

std::string shorten(std::string s, size_t n = 80) { return s.size() > n ? s.substr(0, n) + "..." : s; }
}  // namespace

std::vector<CodeBlock> extract_code_blocks(const std::string& text) {
  std::vector<CodeBlock> blocks;
  const auto lines = split_lines(text);
  std::optional<CodeBlock> open;
  char fence_char = 0;
  size_t fence_len = 0;
  for (const auto& line : lines) {
    const std::string t = trim(line);
    if (!open) {
      if (t.size() >= 3 && (t[0] == '`' || t[0] == '~')) {
        const char c = t[0];
        const size_t n = t.find_first_not_of(c);
        const size_t len = n == std::string::npos ? t.size() : n;
        if (len < 3) continue;
        const std::string info = trim(t.substr(len));
        if (c == '`' && info.find('`') != std::string::npos) continue;  // inline code, not a fence
        open = CodeBlock{lower(info.substr(0, info.find_first_of(" \t{"))), "", true};
        fence_char = c;
        fence_len = len;
      }
      continue;
    }
    if (t.size() >= fence_len && t.find_first_not_of(fence_char) == std::string::npos) {
      blocks.push_back(std::move(*open));
      open.reset();
      continue;
    }
    open->body += line + "\n";
  }
  if (open) {
    open->closed = false;
    blocks.push_back(std::move(*open));
  }
  return blocks;
}

std::optional<CodeBlock> select_kernel_block(const std::vector<CodeBlock>& blocks) {
  std::vector<const CodeBlock*> usable;
  for (const auto& b : blocks)
    if (b.closed && !is_blank(b.body) && !has_diff_markers(b.body)) usable.push_back(&b);
  auto largest = [&](auto pred) -> const CodeBlock* {
    const CodeBlock* best = nullptr;
    for (const auto* b : usable)
      if (pred(*b) && (best == nullptr || b->body.size() > best->body.size())) best = b;
    return best;
  };
  for (auto pred : std::vector<std::function<bool(const CodeBlock&)>>{
           [](const CodeBlock& b) { return is_cuda_lang(b.lang) && mentions_entry(b.body); },
           [](const CodeBlock& b) { return mentions_entry(b.body); },
           [](const CodeBlock& b) { return is_cuda_lang(b.lang); },
           [](const CodeBlock&) { return true; }}) {
    if (const CodeBlock* b = largest(pred)) return *b;
  }
  return std::nullopt;
}

std::vector<DiffBlock> extract_diff_blocks(const std::string& text) {
  enum class State { outside, search, replace } state = State::outside;
  std::vector<DiffBlock> out;
  DiffBlock current;
  for (const auto& line : split_lines(text)) {
    switch (state) {
      case State::outside:
        if (std::regex_match(line, search_marker())) {
          current = {};
          state = State::search;
        }
        break;
      case State::search:
        if (std::regex_match(line, divider_marker())) state = State::replace;
        else current.search += line + "\n";
        break;
      case State::replace:
        if (std::regex_match(line, replace_marker())) {
          out.push_back(std::move(current));
          state = State::outside;
        } else {
          current.replace += line + "\n";
        }
        break;
    }
  }
  return out;  // an unterminated last block is left out; parse_kernel_reply reports it
}

ApplyResult apply_diff(const std::string& parent, const std::vector<DiffBlock>& blocks) {
  ApplyResult r;
  std::string source = parent;
  for (size_t bi = 0; bi < blocks.size(); ++bi) {
    const auto& b = blocks[bi];
    const auto where = fmt::format("SEARCH block {} of {}", bi + 1, blocks.size());
    if (is_blank(b.search)) {
      r.error = where + " is empty; quote the lines to replace";
      return r;
    }
    if (auto pos = find_at_line_start(source, b.search); pos != std::string::npos) {
      source.replace(pos, b.search.size(), b.replace);
      continue;
    }
    const auto lines = split_lines(source);
    const auto needle = without_blank_edges(split_lines(b.search));
    const bool ends_with_newline = !source.empty() && source.back() == '\n';
    std::optional<size_t> at = find_lines(lines, needle, rtrim);
    bool reindent = false;
    if (!at) {
      at = find_lines(lines, needle, trim);
      reindent = at.has_value();
    }
    if (!at) {
      r.error = fmt::format("{} does not match the parent source (even ignoring whitespace); its first line is '{}'",
                            where, shorten(trim(first_nonblank(needle))));
      return r;
    }
    ++r.fuzzy_matches;
    std::vector<std::string> replacement = split_lines(b.replace);
    if (reindent) {
      const std::string from = indent_of(first_nonblank(needle));
      const std::string to = indent_of(lines[*at + (std::find_if(needle.begin(), needle.end(), [](const std::string& l) {
                                                      return !is_blank(l);
                                                    }) - needle.begin())]);
      for (auto& l : replacement)
        if (!is_blank(l) && l.compare(0, from.size(), from) == 0) l = to + l.substr(from.size());
    }
    std::string rebuilt = join_lines(lines, 0, *at);
    for (const auto& l : replacement) rebuilt += l + "\n";
    rebuilt += join_lines(lines, *at + needle.size(), lines.size());
    if (!ends_with_newline && !rebuilt.empty()) rebuilt.pop_back();
    source = std::move(rebuilt);
  }
  r.ok = true;
  r.source = std::move(source);
  return r;
}

ParsedAction parse_kernel_reply(const std::string& reply_raw, const std::optional<std::string>& parent_source) {
  ParsedAction p;
  const std::string reply = strip_think(reply_raw);
  const auto diffs = extract_diff_blocks(reply);
  size_t search_markers = 0;
  for (const auto& line : split_lines(reply))
    if (std::regex_match(line, search_marker())) ++search_markers;
  if (search_markers > diffs.size()) {
    p.error = fmt::format("{} SEARCH/REPLACE block(s) are unterminated (missing ======= or >>>>>>> REPLACE); the reply may be cut off",
                          search_markers - diffs.size());
    return p;
  }
  if (!diffs.empty()) {
    if (!parent_source) {
      p.error = "the reply is a SEARCH/REPLACE diff but there is no parent kernel to apply it to";
      return p;
    }
    ApplyResult applied = apply_diff(*parent_source, diffs);
    if (!applied.ok) {
      p.error = applied.error;
      return p;
    }
    p.ok = true;
    p.kind = "diff";
    for (const auto& d : diffs) p.action += "<<<<<<< SEARCH\n" + d.search + "=======\n" + d.replace + ">>>>>>> REPLACE\n";
    p.source = std::move(applied.source);
    return p;
  }
  const auto blocks = extract_code_blocks(reply);
  const auto kernel = select_kernel_block(blocks);
  if (!kernel) {
    const bool cut = std::any_of(blocks.begin(), blocks.end(), [](const CodeBlock& b) { return !b.closed; });
    p.error = cut ? "the reply ends inside an unclosed code block (cut off at max_tokens?)"
                  : "the reply has no fenced code block and no SEARCH/REPLACE block";
    return p;
  }
  p.ok = true;
  p.kind = "full_source";
  p.action = kernel->body;
  p.source = kernel->body;
  return p;
}

namespace {
// End of the balanced {...} starting at `open`, skipping braces inside strings.
std::optional<size_t> balanced_end(const std::string& s, size_t open) {
  int depth = 0;
  bool in_string = false;
  for (size_t i = open; i < s.size(); ++i) {
    const char c = s[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{') {
      ++depth;
    } else if (c == '}' && --depth == 0) {
      return i;
    }
  }
  return std::nullopt;
}
}  // namespace

std::optional<nlohmann::json> extract_json_object(const std::string& text_raw) {
  const std::string text = strip_think(text_raw);
  for (const auto& b : extract_code_blocks(text)) {
    if (b.lang != "json" || !b.closed) continue;
    auto j = nlohmann::json::parse(b.body, nullptr, false);
    if (!j.is_discarded() && j.is_object()) return j;
  }
  for (size_t pos = text.find('{'); pos != std::string::npos; pos = text.find('{', pos + 1)) {
    const auto end = balanced_end(text, pos);
    if (!end) continue;
    auto j = nlohmann::json::parse(text.substr(pos, *end - pos + 1), nullptr, false);
    if (!j.is_discarded() && j.is_object()) return j;
  }
  return std::nullopt;
}

}  // namespace tessera::agent
