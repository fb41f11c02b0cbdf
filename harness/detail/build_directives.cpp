#include "harness/detail/build_directives.hpp"

#include <filesystem>
#include <map>
#include <mutex>
#include <sstream>

#include <fmt/format.h>

#include "core/hash.hpp"

namespace tessera::detail {

namespace fs = std::filesystem;

namespace {

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return {};
  return s.substr(b, s.find_last_not_of(" \t\r") - b + 1);
}

std::string folder_fingerprint(const fs::path& dir) {
  Hasher h;
  std::error_code ec;
  std::size_t files = 0;
  for (fs::recursive_directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec), end;
       !ec && it != end && files < kMaxFingerprintFiles; it.increment(ec)) {
    if (!it->is_regular_file(ec)) continue;
    const auto size = it->file_size(ec);
    const auto mtime = fs::last_write_time(it->path(), ec).time_since_epoch().count();
    h.add(fs::relative(it->path(), dir, ec).string()).add(fmt::format("{}:{}", size, mtime));
    ++files;
  }
  return fmt::format("{}:{}:{}", dir.string(), files, h.hex());
}

}  // namespace

std::vector<std::string> nvcc_directives(const std::string& source) {
  std::vector<std::string> out;
  const std::string tag = kNvccDirective;
  std::istringstream in(source);
  for (std::string line; std::getline(in, line);) {
    const std::string t = trim(line);
    if (t.rfind(tag, 0) == 0) out.push_back(trim(t.substr(tag.size())));
  }
  return out;
}

std::string nvcc_directive_lines(const std::vector<std::string>& args) {
  std::string out;
  for (const auto& a : args) out += fmt::format("{} {}\n", kNvccDirective, a);
  return out;
}

std::string include_fingerprint(const std::string& source) {
  static std::mutex mu;
  static std::map<std::string, std::string> memo;
  std::string out;
  for (const auto& arg : nvcc_directives(source)) {
    if (arg.rfind("-I", 0) != 0) continue;
    const std::string dir = arg.substr(2);
    std::lock_guard g(mu);
    auto it = memo.find(dir);
    if (it == memo.end()) it = memo.emplace(dir, folder_fingerprint(dir)).first;
    out += it->second + ";";
  }
  return out;
}

}  // namespace tessera::detail
