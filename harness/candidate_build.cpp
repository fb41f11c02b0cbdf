#include "harness/candidate_build.hpp"

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/fs.hpp"
#include "harness/detail/build_directives.hpp"
#include "harness/detail/compile_steps.hpp"
#include "harness/torch_ext.hpp"

namespace tessera {

namespace fs = std::filesystem;

nlohmann::json to_json(const BuildOptions& b) {
  return {{"include_dirs", b.include_dirs}, {"nvcc_flags", b.nvcc_flags}, {"torch_entry", b.torch_entry}};
}

std::vector<std::string> build_arguments(const BuildOptions& build) {
  std::vector<std::string> args;
  for (const auto& d : build.include_dirs) {
    std::error_code ec;
    if (!fs::is_directory(d, ec)) fail_bad_input(fmt::format("--include-dir {}: no such folder", d));
    args.push_back("-I" + fs::absolute(d).lexically_normal().string());
  }
  args.insert(args.end(), build.nvcc_flags.begin(), build.nvcc_flags.end());
  if (auto why = detail::nvcc_args_policy(args); !why.empty()) fail_bad_input(why);
  if (!build.torch_entry.empty()) (void)parse_torch_entry(build.torch_entry);
  return args;
}

namespace {

bool defines_an_entry(const std::string& source) {
  try {
    (void)detect_kind(source);
    return true;
  } catch (const Error&) {
    return false;
  }
}

}  // namespace

Candidate load_candidate_with(const fs::path& path, const std::string& kind, const BuildOptions& build) {
  const std::string source = read_file(path);
  if (build.torch_entry.empty() && includes_torch_headers(source) && !defines_an_entry(source))
    fail_bad_input(fmt::format("{} looks like a PyTorch extension (it includes torch headers): name its host function "
                               "and operands with --torch-entry, e.g. --torch-entry \"hgemm(a, b_col_major, c)\"",
                               path.string()));
  if (build.empty()) return load_candidate(path, kind);
  const auto args = build_arguments(build);
  Candidate c;
  if (!build.torch_entry.empty()) {
    if (const auto k = parse_kind_choice(kind); k && *k != CandidateKind::translation_unit)
      fail_bad_input("--torch-entry makes a translation unit; --kind " + kind + " does not fit it");
    c.kind = CandidateKind::translation_unit;
    c.name = path.filename().string();
    c.source = adapt_torch_extension(source, c.name, parse_torch_entry(build.torch_entry));
  } else {
    c = load_candidate(path, kind);
    if (c.kind != CandidateKind::translation_unit)
      fail_bad_input(fmt::format("--include-dir and --nvcc-flag apply to translation units (tessera_launch); {} is a "
                                 "device-only candidate, compiled by NVRTC",
                                 path.string()));
    c.source = fmt::format("#line 1 \"{}\"\n{}", c.name, c.source);  // compiler messages keep the file's lines
  }
  c.source = detail::nvcc_directive_lines(args) + c.source;
  return c;
}

}  // namespace tessera
