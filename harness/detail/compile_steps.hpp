#pragma once
// The two compile paths and the static checks that follow them.
#include <filesystem>
#include <string>
#include <vector>

#include "harness/compiler.hpp"
#include "harness/detail/ptxas_log.hpp"
#include "harness/subprocess.hpp"

namespace tessera::detail {

// `pch_dir` non-empty: automatic precompiled headers, kept there (a compile server's own folder).
CompileOutput compile_nvrtc(const CompileRequest& request, const std::filesystem::path& cubin_path,
                            const std::filesystem::path& pch_dir = {});
CompileOutput compile_nvcc(const CompileRequest& request, const std::filesystem::path& so_path,
                           const std::filesystem::path& work_dir, double timeout_seconds);
std::string nvcc_version();
std::filesystem::path cuda_include_dir();

// When a compiler process could not be run or ran out of time, fills `out`
// (infra_error / timeout, named after `what`) and returns true.
bool process_failed(const ProcessResult& pr, const std::string& what, double timeout_seconds, CompileOutput& out);

// Policy for translation units: no vendor GEMM/DNN libraries, no dynamic
// loading. Empty = allowed, else the reason. Checks the source text and the
// built shared object's needed libraries and undefined symbols.
std::string tu_source_policy(const std::string& source);
std::string tu_binary_policy(const std::string& so_image);
// Policy for the nvcc arguments of a translation unit's build directives
// (harness/detail/build_directives.hpp): an allow-list. Empty = allowed.
std::string nvcc_args_policy(const std::vector<std::string>& args);

// The timer's own kernels (worker::kFlushKernelName, worker::kProbeKernelName; a
// test keeps the two lists equal). Samples leave out the time of kernels with
// these names.
inline constexpr const char* kHarnessKernelNames[] = {"tessera_l2_flush", "tessera_clock_probe"};
// Every name with this prefix belongs to the harness (poison, input variation,
// output checks around timed calls: worker/integrity_kernels.hpp).
inline constexpr const char* kHarnessKernelPrefix = "tessera_harness_";

// The rules a compiled artifact was checked against (forbidden libraries and
// symbols, reserved names, a version): part of the compile cache's key, so
// a cached artifact is never one that passed older rules.
std::string policy_fingerprint();

// Empty, or why the candidate is rejected: its source, its compiler's entry
// functions (ptxas log) or its built module (cubin or shared object; may be
// empty) use a name of kHarnessKernelNames or one with kHarnessKernelPrefix
// (reserved_names.cpp).
std::string reserved_name_policy(const std::string& source, const std::string& ptxas_log,
                                 const std::string& binary_image);

}  // namespace tessera::detail
