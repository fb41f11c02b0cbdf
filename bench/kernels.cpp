#include "bench/kernels.hpp"

#include <charconv>

#include <fmt/format.h>

#include "core/error.hpp"

namespace tessera::bench {

namespace fs = std::filesystem;

namespace {

constexpr const char* kKinds =
    "none, tile:BUDGET, search:BUDGET[:evolve|bandit][:alone], run:DIR, dir:DIR, file:FILE.cu, or a path";

int parse_budget(const std::string& spec, const std::string& value) {
  int budget = 0;
  const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), budget);
  if (ec != std::errc() || end != value.data() + value.size() || budget < 1)
    fail_bad_input(fmt::format("--kernels {}: the budget must be a positive integer (configs per shape), e.g. {}:24",
                               spec, spec.substr(0, spec.find(':'))));
  return budget;
}

// search:BUDGET[:evolve|bandit][:alone]
KernelSource parse_search(const std::string& spec, const std::string& value) {
  KernelSource s{KernelSourceKind::search, {}, 0};
  std::vector<std::string> parts;
  for (std::size_t from = 0;;) {
    const auto colon = value.find(':', from);
    parts.push_back(value.substr(from, colon - from));
    if (colon == std::string::npos) break;
    from = colon + 1;
  }
  s.budget = parse_budget(spec, parts[0]);
  for (std::size_t i = 1; i < parts.size(); ++i) {
    if (parts[i] == "evolve" || parts[i] == "bandit") s.method = parts[i];
    else if (parts[i] == "alone") s.alone = true;
    else fail_bad_input(fmt::format("--kernels {}: unknown '{}' (search:BUDGET[:evolve|bandit][:alone])", spec, parts[i]));
  }
  return s;
}

fs::path kernel_folder(const KernelSource& s) { return s.kind == KernelSourceKind::run ? s.path / "best" : s.path; }

KernelSource from_path(const fs::path& p) {
  std::error_code ec;
  if (fs::is_regular_file(p, ec)) return {KernelSourceKind::file, p, 0};
  if (fs::is_directory(p, ec)) return {fs::is_directory(p / "best", ec) ? KernelSourceKind::run : KernelSourceKind::dir, p, 0};
  fail_bad_input(fmt::format("--kernels {}: no such file or folder (expected {})", p.string(), kKinds));
}

}  // namespace

std::string KernelSource::spec() const {
  switch (kind) {
    case KernelSourceKind::none: return "none";
    case KernelSourceKind::tile: return fmt::format("tile:{}", budget);
    case KernelSourceKind::search: return fmt::format("search:{}:{}{}", budget, method, alone ? ":alone" : "");
    case KernelSourceKind::run: return "run:" + path.string();
    case KernelSourceKind::dir: return "dir:" + path.string();
    case KernelSourceKind::file: return "file:" + path.string();
  }
  return "none";
}

KernelSource parse_kernel_source(const std::string& spec) {
  if (spec.empty() || spec == "none") return {};
  const auto colon = spec.find(':');
  if (colon == std::string::npos || spec.rfind("/", 0) == 0 || spec.rfind(".", 0) == 0) return from_path(spec);
  const std::string kind = spec.substr(0, colon), value = spec.substr(colon + 1);
  if (kind == "tile") return {KernelSourceKind::tile, {}, parse_budget(spec, value)};
  if (kind == "search") return parse_search(spec, value);
  if (kind != "run" && kind != "dir" && kind != "file")
    fail_bad_input(fmt::format("--kernels {}: unknown kernel source '{}' (expected {})", spec, kind, kKinds));
  if (value.empty()) fail_bad_input(fmt::format("--kernels {}: no path after '{}:'", spec, kind));
  KernelSource s = from_path(value);
  if (kind == "file" && s.kind != KernelSourceKind::file)
    fail_bad_input(fmt::format("--kernels {}: {} is a folder, not a kernel file", spec, value));
  if (kind != "file" && s.kind == KernelSourceKind::file)
    fail_bad_input(fmt::format("--kernels {}: {} is a file, not a folder", spec, value));
  if (kind == "run" && s.kind != KernelSourceKind::run)
    fail_bad_input(fmt::format("--kernels {}: {} has no best/ folder (not a search run, or it has no best kernel yet)",
                               spec, value));
  if (kind == "dir") s.kind = KernelSourceKind::dir;
  return s;
}

std::vector<std::string> kernel_file_names(const Task& t) {
  return {t.id() + ".cu", fmt::format("{}x{}x{}.cu", t.m, t.n, t.k), fmt::format("{}_{}_{}.cu", t.m, t.n, t.k)};
}

std::optional<fs::path> kernel_file_for(const KernelSource& s, const Task& t) {
  if (s.kind == KernelSourceKind::file) return s.path;
  if (s.kind != KernelSourceKind::run && s.kind != KernelSourceKind::dir) return std::nullopt;
  std::error_code ec;
  for (const auto& name : kernel_file_names(t))
    if (fs::is_regular_file(kernel_folder(s) / name, ec)) return kernel_folder(s) / name;
  return std::nullopt;
}

void check_covers_some(const KernelSource& s, const std::vector<Task>& tasks) {
  if (s.kind != KernelSourceKind::run && s.kind != KernelSourceKind::dir) return;
  for (const auto& t : tasks)
    if (kernel_file_for(s, t)) return;
  const auto names = tasks.empty() ? std::vector<std::string>{} : kernel_file_names(tasks.front());
  fail_bad_input(fmt::format("{} holds a kernel for none of the {} tasks (for {} it looked for {})",
                             kernel_folder(s).string(), tasks.size(), tasks.empty() ? "?" : tasks.front().shape(),
                             names.empty() ? "" : names[0] + ", " + names[1] + ", " + names[2]));
}

}  // namespace tessera::bench
