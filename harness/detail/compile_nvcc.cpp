// Full translation units: nvcc -> shared object exporting tessera_launch.
#include <algorithm>
#include <array>
#include <cctype>
#include <regex>

#include <fmt/format.h>

#include "harness/core/error.hpp"
#include "harness/core/fs.hpp"
#include "harness/core/hash.hpp"
#include "harness/detail/compile_steps.hpp"
#include "harness/detail/elf.hpp"
#include "harness/detail/subprocess.hpp"

namespace tessera::detail {

namespace {

// Libraries a candidate may not use: the point is to beat them, not call them.
constexpr std::array kForbiddenLibraries = {"cublas", "cudnn", "cufft", "curand", "cusparse", "cusolver",
                                            "nvblas", "cutensor", "nvjitlink", "nvrtc", "torch", "triton"};
// Dynamic loading could reach them anyway.
constexpr std::array kForbiddenSymbols = {"dlopen", "dlmopen", "dlsym", "dlvsym", "cuLibraryLoadFromFile",
                                          "cuLibraryLoadData", "cuModuleLoad", "cuModuleLoadData",
                                          "cuModuleLoadDataEx", "cudaLibraryLoadFromFile", "cudaLibraryLoadData",
                                          "fork", "execve", "system", "popen",
                                          // Ways to find another library's code at run time.
                                          "dl_iterate_phdr", "cuGetProcAddress", "cuGetProcAddress_v2",
                                          "cudaGetDriverEntryPoint", "cudaGetDriverEntryPointByVersion"};

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

std::string tu_source_policy(const std::string& source) {
  const std::string s = lower(source);
  for (const char* lib : kForbiddenLibraries) {
    if (s.find(std::string(lib)) != std::string::npos &&
        std::regex_search(s, std::regex("#\\s*include\\s*[<\"][^>\"]*" + std::string(lib))))
      return fmt::format("includes a header of a forbidden library ({})", lib);
  }
  for (const char* sym : kForbiddenSymbols) {
    if (std::regex_search(source, std::regex("\\b" + std::string(sym) + "\\s*\\(")))
      return fmt::format("calls {}(), which is not allowed in a candidate", sym);
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
    for (const char* bad : kForbiddenSymbols)
      if (sym.name == bad) return fmt::format("references {}, which is not allowed in a candidate", sym.name);
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
  if (auto why = tu_source_policy(request.source); !why.empty()) {
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
