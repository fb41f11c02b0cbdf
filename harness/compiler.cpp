#include "harness/compiler.hpp"

#include <sys/resource.h>

#include <chrono>
#include <cstdlib>
#include <iostream>
#include <atomic>
#include <future>
#include <iterator>
#include <map>
#include <mutex>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "core/error.hpp"
#include "core/fs.hpp"
#include "core/hash.hpp"
#include "core/json_struct.hpp"
#include "harness/detail/build_directives.hpp"
#include "harness/detail/compile_steps.hpp"
#include "harness/subprocess.hpp"

namespace tessera {

namespace detail {
const std::string& embedded_abi_header();
}

namespace {
// AddressSanitizer reserves terabytes of address space for its shadow memory
// before main(): in such a build an address-space limit would fail every
// allocation, so the compile child does without it (scripts/test_sanitizers.sh).
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kAddressSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kAddressSanitizer = true;
#else
constexpr bool kAddressSanitizer = false;
#endif
#else
constexpr bool kAddressSanitizer = false;
#endif
}  // namespace

const std::string& abi_header_source() { return detail::embedded_abi_header(); }

TESSERA_JSON_STRUCT(CompileOutput, status, reason, info, resources, artifact, contract, artifact_hash)

Compiler::Compiler(CompilerOptions options) : options_(std::move(options)) {
  if (options_.cache_dir.empty()) options_.cache_dir = cache_dir() / "kernels";
  std::filesystem::create_directories(options_.cache_dir);
}

std::string Compiler::key(const CompileRequest& r) const {
  Hasher h;
  h.add(to_string(r.kind)).add(r.source).add(r.arch).add(abi_header_source()).add(detail::policy_fingerprint());
  h.add(r.kind == CandidateKind::device_only ? nvrtc_version() : detail::nvcc_version());
  for (const auto& o : r.extra_options) h.add(o);
  if (r.kind == CandidateKind::translation_unit) h.add(detail::include_fingerprint(r.source));  // -I folders' files
  return h.hex();
}

std::string Compiler::artifact_problem(const std::string& key, const CompileOutput& entry) const {
  // Its own file: an entry cannot send the worker to a file elsewhere.
  const auto ext = entry.artifact.extension();
  if ((ext != ".cubin" && ext != ".so") ||
      entry.artifact.lexically_normal() != (options_.cache_dir / (key + ext.string())).lexically_normal())
    return "its artifact is not this entry's file in the cache";
  std::error_code ec;
  if (!std::filesystem::is_regular_file(entry.artifact, ec)) return "its artifact is missing";
  if (entry.artifact_hash.empty()) return "it records no content hash (written by an older tessera)";
  if (content_hash(read_file(entry.artifact)) != entry.artifact_hash)
    return "its artifact does not match the recorded content hash (tampered with or truncated)";
  return {};
}

std::optional<CompileOutput> Compiler::lookup(const std::string& key) const {
  const auto meta = options_.cache_dir / (key + ".json");
  std::error_code ec;
  if (!std::filesystem::exists(meta, ec)) return std::nullopt;
  try {
    CompileOutput out = nlohmann::json::parse(read_file(meta)).get<CompileOutput>();
    if (out.status != Status::ok) return std::nullopt;  // only successful compiles are cached
    if (auto why = artifact_problem(key, out); !why.empty()) {
      spdlog::warn("compile cache: entry {} is not used, {}; compiling again", key, why);
      return std::nullopt;
    }
    out.info.cached = true;
    return out;
  } catch (const std::exception& e) {
    spdlog::warn("compile cache: entry {} is unreadable ({}); compiling again", key, e.what());
    return std::nullopt;  // a damaged entry is a miss, and is overwritten
  }
}

namespace {

// Compiles under way in this process, by cache entry. A pool compiles ahead
// on evaluator 0's compiler while each GPU's evaluator compiles what it is
// about to measure; without this, an evaluator that reaches a candidate whose
// compile-ahead is still running starts a second child for the same entry,
// and with several GPUs those duplicates crowd out the compiles that are
// still needed (issue 37's stage breakdown: 20 of 64 evaluations at 2048³ on
// 4 GPUs compiled themselves).
class InFlight {
public:
  // The running compile of `entry`, or nullopt after registering the caller as
  // the one who compiles it (it must call finish()).
  std::optional<std::shared_future<CompileOutput>> join_or_claim(const std::string& entry) {
    std::lock_guard g(mu_);
    if (auto it = running_.find(entry); it != running_.end()) return it->second.future;
    auto& slot = running_[entry];
    slot.future = slot.promise.get_future().share();
    return std::nullopt;
  }
  void finish(const std::string& entry, const CompileOutput* out, std::exception_ptr error) {
    std::lock_guard g(mu_);
    auto it = running_.find(entry);
    if (it == running_.end()) return;
    if (out) it->second.promise.set_value(*out);
    else it->second.promise.set_exception(error);
    running_.erase(it);
  }

private:
  struct Slot {
    std::promise<CompileOutput> promise;
    std::shared_future<CompileOutput> future;
  };
  std::mutex mu_;
  std::map<std::string, Slot> running_;
};

InFlight& in_flight() {
  static InFlight instance;
  return instance;
}

std::atomic<long long> g_compiles_run{0};

}  // namespace

long long compiles_run() { return g_compiles_run.load(); }

CompileOutput Compiler::compile(const CompileRequest& request) {
  const auto t0 = std::chrono::steady_clock::now();
  const auto since_t0 = [&] { return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count(); };
  const std::string k = key(request);
  if (auto hit = lookup(k)) {
    hit->info.ms = since_t0();
    return *hit;
  }
  const std::string entry = (options_.cache_dir / k).string();
  if (auto running = in_flight().join_or_claim(entry)) {
    CompileOutput shared = running->get();  // the other caller's result (an exception is rethrown here)
    shared.info.ms = since_t0();            // this caller's wait
    return shared;
  }
  // Claimed: another caller may have finished (and left the in-flight list)
  // between the lookup above and the claim.
  if (auto hit = lookup(k)) {
    hit->info.ms = since_t0();
    in_flight().finish(entry, &*hit, nullptr);
    return *hit;
  }
  try {
    CompileOutput out = compile_uncached(request, k, t0);
    in_flight().finish(entry, &out, nullptr);
    return out;
  } catch (...) {
    in_flight().finish(entry, nullptr, std::current_exception());
    throw;
  }
}

CompileOutput Compiler::compile_uncached(const CompileRequest& request, const std::string& k,
                                         std::chrono::steady_clock::time_point t0) {
  ++g_compiles_run;
  CompileOutput out = options_.out_of_process ? compile_in_child(request, k) : compile_in_process(request, k);
  out.info.key = k;
  out.info.arch = request.arch;
  out.info.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  out.info.log = detail::trim_log(out.info.log, kCompileLogLimitBytes);
  if (out.status == Status::ok) {
    // Hashed here, on the trusted side, as the compiler left it.
    out.artifact_hash = content_hash(read_file(out.artifact));
    atomic_write_file(options_.cache_dir / (k + ".json"), nlohmann::json(out).dump(1));
  }
  return out;
}

CompileOutput Compiler::compile_in_process(const CompileRequest& request, const std::string& key) {
  const auto artifact_base = options_.cache_dir / key;
  return request.kind == CandidateKind::device_only
             ? detail::compile_nvrtc(request, artifact_base.string() + ".cubin")
             : detail::compile_nvcc(request, artifact_base.string() + ".so", options_.cache_dir / "tu-work",
                                    options_.timeout_seconds);
}

CompileOutput Compiler::compile_in_child(const CompileRequest& request, const std::string& key) {
  const CompileChildRequest req{request, options_.cache_dir, key, options_.timeout_seconds};
  const auto exe = options_.self_exe.empty() ? tessera_executable() : options_.self_exe;
  auto pr = run_process(exe, {"__compile"}, nlohmann::json(req).dump(), options_.timeout_seconds,
                                4 * kCompileLogLimitBytes + (1 << 20), options_.cache_dir / "child-work");
  CompileOutput out;
  out.info.compiler = request.kind == CandidateKind::device_only ? "nvrtc" : "nvcc";
  if (detail::process_failed(pr, "compile", options_.timeout_seconds, out)) return out;
  // The child prints exactly one JSON line last; anything before it is noise.
  auto pos = pr.output.rfind("\n{\"TESSERA_COMPILE\":");
  if (pos == std::string::npos && pr.output.rfind("{\"TESSERA_COMPILE\":", 0) == 0) pos = 0;
  else if (pos != std::string::npos) pos += 1;
  if (pos == std::string::npos) {
    // No answer: the compiler died (a memory limit hit, a crash inside NVRTC).
    out.status = Status::compile_error;
    out.reason = fmt::format("compiler process died (exit code {}) without a result", pr.exit_code);
    out.info.log = pr.output;
    return out;
  }
  try {
    auto line_end = pr.output.find('\n', pos);
    auto j = nlohmann::json::parse(pr.output.substr(pos, line_end == std::string::npos ? line_end : line_end - pos));
    return read_strict<CompileOutput>(j.at("TESSERA_COMPILE"), "the compile child's answer");
  } catch (const std::exception& e) {
    out.status = Status::infra_error;
    out.reason = fmt::format("unreadable answer from the compiler process: {}", e.what());
    return out;
  }
}

int compile_child_main() {
  // Limits inherited by nvcc and its children: a compile bomb hits these
  // instead of the machine.
  if (!kAddressSanitizer) {
    rlimit as{kCompileMemoryLimitBytes, kCompileMemoryLimitBytes};
    setrlimit(RLIMIT_AS, &as);
  }
  rlimit fsize{1ull << 30, 1ull << 30};
  setrlimit(RLIMIT_FSIZE, &fsize);
  CompileOutput out;
  try {
    std::string input((std::istreambuf_iterator<char>(std::cin)), std::istreambuf_iterator<char>());
    const auto req = read_strict<CompileChildRequest>(nlohmann::json::parse(input), "compile request");
    CompilerOptions o;
    o.cache_dir = req.cache_dir;
    o.out_of_process = false;
    o.timeout_seconds = req.timeout_seconds;
    Compiler c(o);
    out = c.compile_in_process(req.request, req.key);
    out.info.log = detail::trim_log(out.info.log, kCompileLogLimitBytes);
  } catch (const std::exception& e) {
    out.status = Status::infra_error;
    out.reason = fmt::format("compile child failed: {}", e.what());
  }
  std::cout << "\n" << nlohmann::json{{"TESSERA_COMPILE", out}}.dump() << std::endl;
  return 0;
}

}  // namespace tessera
