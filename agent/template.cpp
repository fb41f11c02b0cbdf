#include <cstdlib>
#include <set>

#include <fmt/format.h>

#include "agent/prompt.hpp"
#include "core/error.hpp"
#include "core/fs.hpp"

#ifndef TESSERA_PROMPT_DIR_DEFAULT
#define TESSERA_PROMPT_DIR_DEFAULT "agent/prompts"
#endif

namespace tessera::agent {

std::string render_template(const std::string& text, const std::map<std::string, std::string>& values,
                            const std::string& template_name) {
  std::string out;
  out.reserve(text.size());
  size_t pos = 0;
  while (true) {
    const size_t open = text.find("{{", pos);
    if (open == std::string::npos) break;
    const size_t close = text.find("}}", open + 2);
    if (close == std::string::npos) break;  // a lone "{{" is literal text
    std::string name = text.substr(open + 2, close - open - 2);
    name.erase(0, name.find_first_not_of(' '));
    name.erase(name.find_last_not_of(' ') + 1);
    auto it = values.find(name);
    if (it == values.end()) {
      std::string known;
      for (const auto& [k, v] : values) known += (known.empty() ? "" : ", ") + k;
      fail_bad_input(fmt::format("prompt template '{}' uses unknown placeholder {{{{{}}}}} (known: {})", template_name, name, known));
    }
    out.append(text, pos, open - pos);
    out += it->second;
    pos = close + 2;
  }
  out.append(text, pos, std::string::npos);
  return out;
}

std::filesystem::path default_prompt_dir() {
  const char* env = std::getenv("TESSERA_PROMPT_DIR");
  return env != nullptr && *env != '\0' ? std::filesystem::path(env) : std::filesystem::path(TESSERA_PROMPT_DIR_DEFAULT);
}

std::filesystem::path default_abi_header() {
  const char* env = std::getenv("TESSERA_ABI_HEADER");
  if (env != nullptr && *env != '\0') return env;
  // <root>/agent/prompts -> <root>/core/abi/tessera_abi.cuh
  return std::filesystem::path(TESSERA_PROMPT_DIR_DEFAULT).parent_path().parent_path() / "core" / "abi" / "tessera_abi.cuh";
}

PromptTemplates::PromptTemplates(std::filesystem::path dir) : dir_(std::move(dir)) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir_, ec))
    fail_bad_input(fmt::format("prompt template directory not found: {} (set TESSERA_PROMPT_DIR)", dir_.string()));
}

bool PromptTemplates::has(const std::string& name) const {
  std::error_code ec;
  return std::filesystem::exists(dir_ / (name + ".md"), ec);
}

const std::string& PromptTemplates::get(const std::string& name) const {
  std::lock_guard lock(mutex_);
  auto it = cache_.find(name);
  if (it != cache_.end()) return it->second;
  const auto path = dir_ / (name + ".md");
  std::error_code ec;
  if (!std::filesystem::exists(path, ec))
    fail_bad_input(fmt::format("prompt template '{}' not found: {}", name, path.string()));
  return cache_.emplace(name, read_file(path)).first->second;
}

}  // namespace tessera::agent
