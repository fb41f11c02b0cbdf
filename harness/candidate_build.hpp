#pragma once
// Bring your own kernels: build options for translation units (include
// folders, extra nvcc flags) and the torch-extension adapter, applied when a
// candidate file is loaded (docs/abi.md, "Build options"). The options become
// directive lines in the candidate's source (harness/detail/build_directives.hpp),
// so they are part of its content hash and compile key and reach nvcc through
// every evaluator unchanged; the result records them (compile.options).
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/candidate.hpp"

namespace tessera {

struct BuildOptions {
  std::vector<std::string> include_dirs;  // folders for -I (made absolute on load)
  std::vector<std::string> nvcc_flags;    // allowed nvcc flags (harness/detail/compile_steps.hpp)
  std::string torch_entry;                // "fn(a, b, c)": the file is a torch extension (harness/torch_ext.hpp)
  bool empty() const { return include_dirs.empty() && nvcc_flags.empty() && torch_entry.empty(); }
};
nlohmann::json to_json(const BuildOptions& b);

// Checks the options without a file: folders exist, flags are allowed, the
// entry parses. bad_input naming the problem. Returns the nvcc arguments.
std::vector<std::string> build_arguments(const BuildOptions& build);

// load_candidate() with the options applied. bad_input for a missing file or
// folder, a flag outside the allowed set, options on a device-only candidate,
// a malformed entry, or a torch-extension file given without --torch-entry.
Candidate load_candidate_with(const std::filesystem::path& path, const std::string& kind, const BuildOptions& build);

}  // namespace tessera
