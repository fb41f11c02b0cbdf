// Device-only candidates: NVRTC in the calling process (the compile child).
#include <nvrtc.h>

#include <cstdlib>
#include <vector>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/fs.hpp"
#include "harness/detail/compile_steps.hpp"
#include "core/contract.hpp"
#include "core/elf.hpp"

#define TESSERA_NVRTC_CHECK(call)                                                                     \
  do {                                                                                                \
    nvrtcResult tessera_rc_ = (call);                                                                          \
    if (tessera_rc_ != NVRTC_SUCCESS)                                                                          \
      throw ::tessera::Error(::tessera::where(__FILE__, __LINE__, #call, nvrtcGetErrorString(tessera_rc_)));   \
  } while (0)

namespace tessera {

std::string nvrtc_version() {
  int major = 0, minor = 0;
  nvrtcVersion(&major, &minor);
  return fmt::format("nvrtc {}.{}", major, minor);
}

namespace detail {

namespace {

// Owns an nvrtcProgram.
class NvrtcProgram {
public:
  NvrtcProgram(const std::string& source, const std::string& header) {
    const char* headers[] = {header.c_str()};
    const char* names[] = {"tessera_abi.cuh"};
    TESSERA_NVRTC_CHECK(nvrtcCreateProgram(&p_, source.c_str(), "candidate.cu", 1, headers, names));
  }
  NvrtcProgram(const NvrtcProgram&) = delete;
  NvrtcProgram& operator=(const NvrtcProgram&) = delete;
  ~NvrtcProgram() noexcept { nvrtcDestroyProgram(&p_); }
  nvrtcProgram get() const { return p_; }

private:
  nvrtcProgram p_ = nullptr;
};

std::string program_log(nvrtcProgram p) {
  std::size_t n = 0;
  if (nvrtcGetProgramLogSize(p, &n) != NVRTC_SUCCESS || n == 0) return {};
  std::string log(n, '\0');
  nvrtcGetProgramLog(p, log.data());
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
  return log;
}

// Checks that the cubin exports what the ABI asks for and reads the contract.
std::string check_device_module(const std::string& cubin, CompileOutput& out) {
  std::string err;
  auto elf = read_elf(cubin, &err);
  if (!elf) return "cubin is unreadable: " + err;
  const auto* entry = find_symbol(*elf, "tessera_hgemm");
  if (!entry || !entry->function)
    return "bad kernel ABI: no kernel `extern \"C\" __global__ void tessera_hgemm(...)` in the module";
  const auto* sym = find_symbol(*elf, "tessera_contract");
  if (!sym) return "bad kernel ABI: no `extern \"C\" __device__ const TesseraLaunchContract tessera_contract`";
  auto contract = decode_contract(sym->data, &err);
  if (!contract) return "bad kernel ABI: " + err;
  if (auto why = check_contract(*contract); !why.empty()) return "bad launch contract: " + why;
  out.contract = contract_to_json(*contract);
  out.resources.dynamic_smem_bytes = contract->dynamic_smem_bytes;
  return {};
}

}  // namespace

std::filesystem::path cuda_include_dir() {
  for (const char* var : {"TESSERA_CUDA_INCLUDE", "CUDA_HOME", "CUDA_PATH"}) {
    if (const char* v = std::getenv(var); v && *v) {
      std::filesystem::path p(v);
      return std::string(var) == "TESSERA_CUDA_INCLUDE" ? p : p / "include";
    }
  }
  return TESSERA_CUDA_INCLUDE_DIR;
}

CompileOutput compile_nvrtc(const CompileRequest& request, const std::filesystem::path& cubin_path,
                            const std::filesystem::path& pch_dir) {
  CompileOutput out;
  out.info.compiler = "nvrtc";
  NvrtcProgram prog(request.source, abi_header_source());
  std::vector<std::string> opts = {"-arch=" + request.arch, "-std=c++17", "--include-path=" + cuda_include_dir().string(),
                                   "--ptxas-options=-v", "-lineinfo", "-DTESSERA_NVRTC=1"};
  if (!pch_dir.empty()) {
    // Quiet: a PCH made or used must leave the log (what a candidate's author
    // sees, and what is cached) as it is without one.
    for (const char* o : {"-pch", "--pch-messages=false", "--pch-verbose=false"}) opts.push_back(o);
    opts.push_back("--pch-dir=" + pch_dir.string());
  }
  opts.insert(opts.end(), request.extra_options.begin(), request.extra_options.end());
  std::vector<const char*> argv;
  for (const auto& o : opts) argv.push_back(o.c_str());
  nvrtcResult rc = nvrtcCompileProgram(prog.get(), static_cast<int>(argv.size()), argv.data());
  out.info.log = program_log(prog.get());
  if (rc != NVRTC_SUCCESS) {
    out.status = rc == NVRTC_ERROR_INVALID_OPTION ? Status::infra_error : Status::compile_error;
    out.reason = fmt::format("NVRTC: {}", nvrtcGetErrorString(rc));
    return out;
  }
  std::size_t size = 0;
  TESSERA_NVRTC_CHECK(nvrtcGetCUBINSize(prog.get(), &size));
  std::string cubin(size, '\0');
  TESSERA_NVRTC_CHECK(nvrtcGetCUBIN(prog.get(), cubin.data()));
  out.resources = parse_ptxas_resources(out.info.log, "tessera_hgemm");
  if (auto why = reserved_name_policy(request.source, out.info.log, cubin); !why.empty()) {
    out.status = Status::rejected;
    out.reason = why;
    return out;
  }
  if (auto why = check_device_module(cubin, out); !why.empty()) {
    out.status = Status::compile_error;
    out.reason = why;
    return out;
  }
  atomic_write_file(cubin_path, cubin);
  out.artifact = cubin_path;
  out.status = Status::ok;
  return out;
}

}  // namespace detail
}  // namespace tessera
