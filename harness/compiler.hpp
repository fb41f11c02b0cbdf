#pragma once
// Compilation of candidates, content-addressed and cached on disk
// (docs/design.md §8). Device-only candidates go through NVRTC, translation units
// through nvcc. Compile runs in a child process (`tessera __compile`, or for
// NVRTC a long-lived compile server, harness/detail/compile_servers.hpp) with a
// time limit, a memory limit and an output limit, so that a compile bomb is a
// `compile_error`/`timeout`, never a hang; cache hits never spawn anything.
#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/candidate.hpp"
#include "core/result.hpp"
#include "core/json_struct.hpp"
#include "core/wire.hpp"

namespace tessera {

// Defaults, each with its unit (kCompileTimeoutSeconds and kDefaultArch, and
// CompileRequest, are wire definitions: core/wire.hpp).
inline constexpr std::size_t kCompileLogLimitBytes = 16 * 1024;
inline constexpr std::size_t kCompileMemoryLimitBytes = 16ull << 30;
// The compile children's and servers' working folder inside the kernel cache.
inline constexpr const char* kCompileWorkFolder = "child-work";
// Every compiled entry of a kernel cache removed, so that the next compile of
// each is real; the working folder stays (running compile servers work there,
// and NVRTC writes its path into the cubins). Errors are ignored.
void clear_compiled(const std::filesystem::path& cache_dir);

struct CompileOutput {
  Status status = Status::infra_error;  // ok, compile_error, timeout, rejected, infra_error
  std::string reason;                   // one line
  CompileInfo info;
  Resources resources;                  // from ptxas; -1 where unknown
  std::filesystem::path artifact;       // .cubin (device-only) or .so (translation unit)
  nlohmann::json contract;              // device-only: the exported TesseraLaunchContract
  // content_hash() of the artifact as the trusted side wrote it; a cache hit
  // whose file no longer matches (tampered, truncated) is a miss.
  std::string artifact_hash;
};
// The compile child's answer (read strictly) and a cache entry's record
// (read leniently: entries of older versions stay readable, then checked).
TESSERA_JSON_DECLARE(CompileOutput);

struct CompilerOptions {
  std::filesystem::path cache_dir;       // default: cache_dir()/kernels
  double timeout_seconds = kCompileTimeoutSeconds;
  bool out_of_process = true;            // false: compile in this process (tests, the __compile child)
  std::filesystem::path self_exe;        // the tessera binary, for `tessera __compile`
};

class Compiler {
public:
  explicit Compiler(CompilerOptions options = {});
  CompileOutput compile(const CompileRequest& request);
  // The content key: source, kind, arch, options, compiler version, ABI header.
  std::string key(const CompileRequest& request) const;
  const CompilerOptions& options() const { return options_; }

  // Compiles here, with no child and no cache lookup (used by the child).
  // `nvrtc_pch_dir` non-empty: NVRTC uses its automatic precompiled headers,
  // their files kept there (only a compile server asks: a PCH never outlives
  // its process, so a one-shot child would pay for making it and never use it).
  CompileOutput compile_in_process(const CompileRequest& request, const std::string& key,
                                   const std::filesystem::path& nvrtc_pch_dir = {});

private:
  std::optional<CompileOutput> lookup(const std::string& key) const;
  // Compiles (a miss, not compiling elsewhere in this process) and records the entry.
  CompileOutput compile_uncached(const CompileRequest& request, const std::string& key,
                                 std::chrono::steady_clock::time_point t0);
  // Empty when the entry's artifact is its own file in this cache and still
  // has the recorded content, else why it cannot be used.
  std::string artifact_problem(const std::string& key, const CompileOutput& entry) const;
  CompileOutput compile_in_child(const CompileRequest& request, const std::string& key);
  CompilerOptions options_;
};

// Compiles this process ran (misses of the cache, each once however many
// callers asked for the same entry at the same time).
long long compiles_run();

// For benches: closes the idle compile servers (harness/detail/compile_servers.hpp),
// so that the next NVRTC compiles start fresh ones; and how many were started
// since the last restart.
void restart_compile_servers();
long long compile_servers_started();

// Entry point of `tessera __compile`: a CompileChildRequest (core/wire.hpp)
// on stdin, its CompileOutput as the last line of stdout.
int compile_child_main();
// Entry point of `tessera __compile --serve` (harness/detail/compile_servers.hpp):
// one CompileChildRequest line after another on stdin, each answered by one
// `{"TESSERA_COMPILE": CompileOutput}` line on stdout, until EOF. `pch_dir`
// non-empty: NVRTC's automatic precompiled headers, their files there.
int compile_server_main(const std::filesystem::path& pch_dir);

// The ABI header's text, injected into every NVRTC compile.
const std::string& abi_header_source();
std::string nvrtc_version();

}  // namespace tessera
