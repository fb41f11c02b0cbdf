// Full translation units: nvcc -> shared object exporting tessera_launch.
#include <algorithm>
#include <array>
#include <cctype>
#include <cstring>
#include <regex>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/fs.hpp"
#include "core/hash.hpp"
#include "harness/detail/build_directives.hpp"
#include "harness/detail/compile_steps.hpp"
#include "core/elf.hpp"
#include "harness/subprocess.hpp"

namespace tessera::detail {

namespace {

// Libraries a candidate may not use: the point is to beat them, not call them.
constexpr std::array kForbiddenLibraries = {"cublas", "cudnn", "cufft", "curand", "cusparse", "cusolver",
                                            "nvblas", "cutensor", "nvjitlink", "nvrtc", "torch", "triton"};
// What a translation unit's host code may not call (its undefined symbols,
// and calls in its source): anything starting with one of these. Dynamic
// loading and the loader's own tables could reach a vendor library; driver
// entry points and export tables reach the driver's hidden functions;
// processes, threads, sockets and signals are the runner's confinement's job,
// and refusing them here gives a clearer reason than a killed runner.
constexpr std::array kForbiddenSymbolPrefixes = {
    "dlopen", "dlmopen", "dlsym", "dlvsym", "dladdr", "dlinfo", "dl_iterate_phdr", "_dl_", "_r_debug",
    "__libc_dlopen", "__libc_dlsym", "getauxval",
    "cuModuleLoad", "cuLibraryLoad", "cudaLibraryLoad", "cuLink", "cuGetProcAddress", "cudaGetDriverEntryPoint",
    "cuGetExportTable", "cudaGetExportTable",
    "fork", "vfork", "clone", "exec", "posix_spawn", "system", "popen", "pthread_create", "syscall", "ptrace",
    "socket", "connect", "kill", "process_vm_"};
// Calls only nvcc's own generated code makes; in a candidate's source they
// would register code behind the runtime's back.
constexpr std::array kForbiddenSourceCalls = {"__cudaRegister"};
// Bumped whenever the rules change, so the compile cache never serves an
// artifact that passed older rules (it is part of the cache key).
constexpr int kPolicyVersion = 2;

// What a candidate's build directives may pass nvcc: absolute include folders,
// macros and code-generation switches; nothing that links, loads or runs
// anything (docs/abi.md, "Build options").
constexpr std::array kAllowedFlags = {"--expt-relaxed-constexpr", "--expt-extended-lambda", "--extended-lambda",
                                      "--use_fast_math", "-use_fast_math", "-lineinfo", "-w", "-O0", "-O1", "-O2",
                                      "-O3", "-std=c++17", "-std=c++20", "--default-stream=per-thread",
                                      "--default-stream=legacy"};
constexpr std::array kAllowedFlagPrefixes = {"-I/", "-D", "-U", "-maxrregcount=", "--maxrregcount=", "--ftz=",
                                             "--prec-div=", "--prec-sqrt=", "--fmad=", "--diag-suppress=",
                                             "-Xptxas="};

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

std::filesystem::path nvcc_path() {
  if (const char* v = std::getenv("TESSERA_NVCC"); v && *v) return v;
  return TESSERA_NVCC_PATH;
}

}  // namespace

std::string nvcc_version() {
  static const std::string v = [] {
    auto r = run_process(nvcc_path(), {"--version"}, "", 30, 4096, std::filesystem::temp_directory_path());
    auto pos = r.output.find("release");
    return pos == std::string::npos ? std::string("nvcc unknown") : r.output.substr(pos, 30);
  }();
  return v;
}

bool process_failed(const ProcessResult& pr, const std::string& what, double timeout_seconds, CompileOutput& out) {
  if (pr.spawn_failed) {
    out.status = Status::infra_error;
    out.reason = pr.error;
    return true;
  }
  if (pr.timed_out) {
    out.status = Status::timeout;
    out.reason = fmt::format("{} exceeded its {:.0f} s limit", what, timeout_seconds);
    out.info.log = pr.output;
    return true;
  }
  return false;
}

std::string policy_fingerprint() {
  std::string f = "policy/" + std::to_string(kPolicyVersion);
  for (const char* s : kForbiddenLibraries) f += std::string(",") + s;
  for (const char* s : kForbiddenSymbolPrefixes) f += std::string(",") + s;
  for (const char* s : kForbiddenSourceCalls) f += std::string(",") + s;
  for (const char* s : kHarnessKernelNames) f += std::string(",") + s;
  return f + "," + kHarnessKernelPrefix;
}

std::string tu_source_policy(const std::string& source) {
  const std::string s = lower(source);
  for (const char* lib : kForbiddenLibraries) {
    if (s.find(std::string(lib)) != std::string::npos &&
        std::regex_search(s, std::regex("#\\s*include\\s*[<\"][^>\"]*" + std::string(lib))))
      return fmt::format("includes a header of a forbidden library ({})", lib);
  }
  std::smatch m;
  for (const char* prefix : kForbiddenSymbolPrefixes) {
    if (source.find(prefix) == std::string::npos) continue;
    // Ordinary words (`kill`, `connect`, `exec`...) must be the whole name in
    // source, where the candidate's own functions may start with them; the
    // binary check sees the library calls themselves.
    const std::string p(prefix);
    const bool word = std::all_of(p.begin(), p.end(), [](char c) { return std::islower(static_cast<unsigned char>(c)); }) &&
                      p.rfind("dl", 0) != 0 && p != "getauxval" && p != "posix_spawn";
    const std::string name = p == "exec" ? "exec(l|lp|le|v|vp|vpe|ve|veat)" : word ? p : p + "\\w*";
    if (std::regex_search(source, m, std::regex("\\b" + name + "\\s*\\)?\\s*\\(")))
      return fmt::format("calls {}, which is not allowed in a candidate", m.str());
  }
  for (const char* prefix : kForbiddenSourceCalls)
    if (std::regex_search(source, m, std::regex("\\b" + std::string(prefix) + "\\w*\\s*\\(")))
      return fmt::format("calls {}, which only nvcc's generated code may", m.str());
  return {};
}

std::string nvcc_args_policy(const std::vector<std::string>& args) {
  for (const auto& a : args) {
    const bool exact = std::find(kAllowedFlags.begin(), kAllowedFlags.end(), a) != kAllowedFlags.end();
    const bool prefixed = std::any_of(kAllowedFlagPrefixes.begin(), kAllowedFlagPrefixes.end(),
                                      [&](const char* p) { return a.size() > std::strlen(p) && a.rfind(p, 0) == 0; });
    if (!exact && !prefixed)
      return fmt::format("nvcc argument '{}' is not allowed (allowed: -I/absolute/folder, -DNAME[=VALUE], -UNAME, "
                         "-O0..3, -std=c++17|20, --expt-relaxed-constexpr, --extended-lambda, --use_fast_math, "
                         "--default-stream=per-thread|legacy, -maxrregcount=N, --ftz=, --prec-div=, --prec-sqrt=, "
                         "--fmad=, --diag-suppress=, -Xptxas=..., -lineinfo, -w)",
                         a);
    if (a.rfind("-D", 0) == 0 || a.rfind("-U", 0) == 0)
      for (const char* lib : kForbiddenLibraries)
        if (lower(a).find(lib) != std::string::npos)
          return fmt::format("nvcc argument '{}' names a forbidden library ({})", a, lib);
  }
  return {};
}

std::string tu_binary_policy(const std::string& so_image) {
  std::string err;
  auto elf = read_elf(so_image, &err);
  if (!elf) return "shared object is unreadable: " + err;
  for (const auto& needed : elf->needed) {
    for (const char* lib : kForbiddenLibraries)
      if (lower(needed).find(lib) != std::string::npos)
        return fmt::format("links {}, a forbidden library", needed);
  }
  for (const auto& sym : elf->symbols) {
    if (sym.defined) continue;
    const std::string l = lower(sym.name);
    for (const char* lib : kForbiddenLibraries)
      if (l.rfind(lib, 0) == 0) return fmt::format("references {} from a forbidden library", sym.name);
    for (const char* prefix : kForbiddenSymbolPrefixes)
      if (sym.name.rfind(prefix, 0) == 0)
        return fmt::format("references {}, which is not allowed in a candidate", sym.name);
  }
  const auto* entry = find_symbol(*elf, "tessera_launch");
  if (!entry || !entry->function)
    return "bad kernel ABI: the shared object does not export `extern \"C\" int tessera_launch(...)`";
  return {};
}

CompileOutput compile_nvcc(const CompileRequest& request, const std::filesystem::path& so_path,
                           const std::filesystem::path& work_dir, double timeout_seconds) {
  CompileOutput out;
  out.info.compiler = "nvcc";
  const std::vector<std::string> user_args = nvcc_directives(request.source);
  out.info.options = user_args;
  for (const auto& why : {tu_source_policy(request.source), nvcc_args_policy(user_args)}) {
    if (why.empty()) continue;
    out.status = Status::rejected;
    out.reason = why;
    return out;
  }
  const auto dir = work_dir / content_hash(request.source + request.arch);
  std::filesystem::create_directories(dir);
  atomic_write_file(dir / "tessera_abi.cuh", abi_header_source());
  atomic_write_file(dir / "candidate.cu", request.source);
  const std::string arch_num = request.arch.substr(3);  // "sm_90a" -> "90a"
  std::vector<std::string> args = {"-shared", "-Xcompiler", "-fPIC", "-O3", "-std=c++17", "-lineinfo",
                                   fmt::format("-gencode=arch=compute_{0},code=sm_{0}", arch_num),
                                   "-Xptxas", "-v", "-I", dir.string(), "-cudart", "shared",
                                   "-Xlinker", "--no-undefined", "-o", (dir / "candidate.so").string(), (dir / "candidate.cu").string()};
  args.insert(args.end(), request.extra_options.begin(), request.extra_options.end());
  for (const auto& a : user_args) {  // a default the user sets again is replaced: nvcc refuses a second -O or -std
    auto same = std::find_if(args.begin(), args.end(), [&](const std::string& d) {
      return (a.rfind("-O", 0) == 0 && d.rfind("-O", 0) == 0) || (a.rfind("-std=", 0) == 0 && d.rfind("-std=", 0) == 0) ||
             a == d;
    });
    if (same == args.end()) args.push_back(a);
    else *same = a;
  }
  auto pr = run_process(nvcc_path(), args, "", timeout_seconds, kCompileLogLimitBytes * 4, dir);
  out.info.log = pr.output;
  if (process_failed(pr, "nvcc", timeout_seconds, out)) return out;
  if (pr.exit_code != 0) {
    out.status = Status::compile_error;
    out.reason = fmt::format("nvcc failed with exit code {}", pr.exit_code);
    return out;
  }
  const std::string image = read_file(dir / "candidate.so");
  if (auto why = reserved_name_policy(request.source, out.info.log, image); !why.empty()) {
    out.status = Status::rejected;
    out.reason = why;
    return out;
  }
  if (auto why = tu_binary_policy(image); !why.empty()) {
    out.status = why.rfind("bad kernel ABI", 0) == 0 ? Status::compile_error : Status::rejected;
    out.reason = why;
    return out;
  }
  out.resources = parse_ptxas_resources(out.info.log, "");
  atomic_write_file(so_path, image);
  out.artifact = so_path;
  out.status = Status::ok;
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  return out;
}

}  // namespace tessera::detail
