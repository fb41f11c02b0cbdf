#include "search/novelty.hpp"

#include <cctype>

#include "core/hash.hpp"

namespace tessera::search {

namespace {
bool is_word(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }
}  // namespace

std::string normalise_source(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  bool pending_space = false;
  auto emit = [&](char c) {
    if (pending_space && !out.empty() && is_word(out.back()) && is_word(c)) out.push_back(' ');
    pending_space = false;
    out.push_back(c);
  };
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '/' && i + 1 < s.size() && s[i + 1] == '/') {
      while (i < s.size() && s[i] != '\n') ++i;
      pending_space = true;
      continue;
    }
    if (c == '/' && i + 1 < s.size() && s[i + 1] == '*') {
      i += 2;
      while (i + 1 < s.size() && !(s[i] == '*' && s[i + 1] == '/')) ++i;
      ++i;  // on the closing '/'
      pending_space = true;
      continue;
    }
    if (c == '"' || c == '\'') {  // literals are copied verbatim
      emit(c);
      for (++i; i < s.size(); ++i) {
        out.push_back(s[i]);
        if (s[i] == '\\' && i + 1 < s.size()) {
          out.push_back(s[++i]);
        } else if (s[i] == c) {
          break;
        }
      }
      continue;
    }
    if (std::isspace(static_cast<unsigned char>(c))) {
      // Preprocessor lines end at newlines, so a newline after a directive is kept.
      if (c == '\n') {
        const auto line_start = out.rfind('\n');
        const std::size_t from = line_start == std::string::npos ? 0 : line_start + 1;
        if (from < out.size() && out[from] == '#') {
          out.push_back('\n');
          pending_space = false;
          continue;
        }
      }
      pending_space = true;
      continue;
    }
    emit(c);
  }
  return out;
}

std::string novelty_key(const Candidate& candidate) {
  return content_hash(to_string(candidate.kind) + "\n" + normalise_source(candidate.source));
}

long long NoveltyIndex::check_and_insert(const std::string& key, long long step) {
  auto [it, inserted] = seen_.emplace(key, step);
  return inserted ? -1 : it->second;
}

long long NoveltyIndex::find(const std::string& key) const {
  auto it = seen_.find(key);
  return it == seen_.end() ? -1 : it->second;
}

}  // namespace tessera::search
