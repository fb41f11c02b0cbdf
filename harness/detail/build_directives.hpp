#pragma once
// Build options of a translation unit travel inside its source, as directive
// lines `// tessera-nvcc: <one nvcc argument>` (docs/abi.md, "Build
// options"): the evaluator passes candidates to the compiler as source text,
// so the options reach nvcc unchanged through every path, and they are part
// of the candidate's content hash and compile key by construction.
#include <string>
#include <vector>

namespace tessera::detail {

inline constexpr const char* kNvccDirective = "// tessera-nvcc:";
// Include folders are fingerprinted (relative path, size, mtime of each file)
// for the compile key; a folder past this many files is keyed by the first ones.
inline constexpr std::size_t kMaxFingerprintFiles = 200000;

// The arguments of the directive lines, in order (whitespace around each trimmed).
std::vector<std::string> nvcc_directives(const std::string& source);
// Directive lines for these arguments, each ending in a newline.
std::string nvcc_directive_lines(const std::vector<std::string>& args);

// A fingerprint of the files under the source's -I folders ("" when it has
// none), so that a changed header is a new compile. Computed once per folder
// per process: headers do not change under a running sweep.
std::string include_fingerprint(const std::string& source);

}  // namespace tessera::detail
