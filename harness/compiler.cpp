#include "harness/compiler.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <iostream>
#include <atomic>
#include <future>
#include <iterator>
#include <map>
#include <mutex>
#include <string_view>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "core/error.hpp"
#include "core/fs.hpp"
#include "core/hash.hpp"
#include "core/json_struct.hpp"
#include "harness/detail/build_directives.hpp"
#include "harness/detail/compile_steps.hpp"
#include "harness/detail/compile_servers.hpp"
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

void clear_compiled(const std::filesystem::path& cache_dir) {
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(cache_dir, ec))
    if (entry.path().filename() != kCompileWorkFolder) std::filesystem::remove_all(entry.path(), ec);
}

void restart_compile_servers() { detail::CompileServers::instance().configure({}); }
long long compile_servers_started() { return detail::CompileServers::instance().stats().started; }

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

CompileOutput Compiler::compile_in_process(const CompileRequest& request, const std::string& key,
                                           const std::filesystem::path& nvrtc_pch_dir) {
  const auto artifact_base = options_.cache_dir / key;
  return request.kind == CandidateKind::device_only
             ? detail::compile_nvrtc(request, artifact_base.string() + ".cubin", nvrtc_pch_dir)
             : detail::compile_nvcc(request, artifact_base.string() + ".so", options_.cache_dir / "tu-work",
                                    options_.timeout_seconds);
}

namespace {

// The compile child's answer line, read strictly; infra_error when it cannot be read.
CompileOutput read_answer(std::string_view line, CompileOutput out) {
  try {
    return read_strict<CompileOutput>(nlohmann::json::parse(line).at(detail::kCompileAnswerKey), "the compile child's answer");
  } catch (const std::exception& e) {
    out.status = Status::infra_error;
    out.reason = fmt::format("unreadable answer from the compiler process: {}", e.what());
    return out;
  }
}

// No answer: the compiler died (a memory limit hit, a crash inside NVRTC).
CompileOutput died_without_answer(int exit_code, std::string output, CompileOutput out) {
  out.status = Status::compile_error;
  out.reason = fmt::format("compiler process died (exit code {}) without a result", exit_code);
  out.info.log = std::move(output);
  return out;
}

}  // namespace

CompileOutput Compiler::compile_in_child(const CompileRequest& request, const std::string& key) {
  const CompileChildRequest req{request, options_.cache_dir, key, options_.timeout_seconds};
  const auto exe = options_.self_exe.empty() ? tessera_executable() : options_.self_exe;
  const std::size_t output_limit = 4 * kCompileLogLimitBytes + (1 << 20);
  const auto work_dir = options_.cache_dir / kCompileWorkFolder;
  CompileOutput out;
  out.info.compiler = request.kind == CandidateKind::device_only ? "nvrtc" : "nvcc";
  // NVRTC compiles go to a long-lived server; nvcc's are processes of their own anyway.
  const auto setting = detail::compile_server_setting();
  if (setting.servers && request.kind == CandidateKind::device_only) {
    using K = detail::CompileServerReply::Kind;
    auto reply = detail::CompileServers::instance().ask({exe, setting.pch, work_dir, output_limit},
                                                        nlohmann::json(req).dump(), options_.timeout_seconds);
    ProcessResult pr;  // for process_failed's wording, shared with the one-shot child
    pr.output = reply.output;
    switch (reply.kind) {
      case K::answer: return read_answer(reply.answer, std::move(out));
      case K::died: return died_without_answer(reply.exit_code, std::move(reply.output), std::move(out));
      case K::timed_out:
        pr.timed_out = true;
        break;
      case K::unavailable:
        pr.spawn_failed = true;
        pr.error = reply.error;
        break;
      case K::overflow:
        out.status = Status::compile_error;
        out.reason = fmt::format("compiler process wrote more than {} bytes without a result", output_limit);
        out.info.log = std::move(reply.output);
        return out;
      case K::closed: break;  // this process is exiting, or a fork of the servers' owner: a one-shot child below
    }
    if (detail::process_failed(pr, "compile", options_.timeout_seconds, out)) return out;
  }
  auto pr =
      run_process(exe, {"__compile"}, nlohmann::json(req).dump(), options_.timeout_seconds, output_limit, work_dir);
  if (detail::process_failed(pr, "compile", options_.timeout_seconds, out)) return out;
  // The child prints exactly one JSON line last; anything before it is noise.
  const std::string marker(detail::kCompileAnswerPrefix);
  auto pos = pr.output.rfind("\n" + marker);
  if (pos == std::string::npos && pr.output.rfind(marker, 0) == 0) pos = 0;
  else if (pos != std::string::npos) pos += 1;
  if (pos == std::string::npos) return died_without_answer(pr.exit_code, std::move(pr.output), std::move(out));
  const auto line_end = pr.output.find('\n', pos);
  return read_answer(std::string_view(pr.output).substr(pos, line_end == std::string::npos ? line_end : line_end - pos),
                     std::move(out));
}

namespace {

// Limits inherited by nvcc and its children: a compile bomb hits these
// instead of the machine.
void set_compile_limits() {
  if (!kAddressSanitizer) {
    rlimit as{kCompileMemoryLimitBytes, kCompileMemoryLimitBytes};
    setrlimit(RLIMIT_AS, &as);
  }
  rlimit fsize{1ull << 30, 1ull << 30};
  setrlimit(RLIMIT_FSIZE, &fsize);
}

// One request's answer; never throws.
CompileOutput compile_request(const std::string& text, const std::filesystem::path& pch_dir) {
  CompileOutput out;
  try {
    const auto req = read_strict<CompileChildRequest>(nlohmann::json::parse(text), "compile request");
    CompilerOptions o;
    o.cache_dir = req.cache_dir;
    o.out_of_process = false;
    o.timeout_seconds = req.timeout_seconds;
    Compiler c(o);
    out = c.compile_in_process(req.request, req.key, pch_dir);
    out.info.log = detail::trim_log(out.info.log, kCompileLogLimitBytes);
  } catch (const std::exception& e) {
    out.status = Status::infra_error;
    out.reason = fmt::format("compile child failed: {}", e.what());
  }
  return out;
}

void print_answer(const CompileOutput& out) {
  // On a line of its own whatever was printed before; flushed (std::endl).
  std::cout << "\n" << nlohmann::json{{std::string(detail::kCompileAnswerKey), out}}.dump() << std::endl;
}

// TEST ONLY: the planted faults of detail/compile_servers.hpp.
void planted_fault(const std::string& request_text) {
  if (request_text.find(detail::kCompileServerCrashMarker) != std::string::npos) std::abort();
  if (request_text.find(detail::kCompileServerHangMarker) != std::string::npos)
    for (;;) ::pause();
}

}  // namespace

int compile_child_main() {
  set_compile_limits();
  std::string input((std::istreambuf_iterator<char>(std::cin)), std::istreambuf_iterator<char>());
  print_answer(compile_request(input, {}));
  return 0;
}

int compile_server_main(const std::filesystem::path& pch_dir) {
  set_compile_limits();
  const char* faults = std::getenv(detail::kCompileServerFaultsEnvVar);
  const bool planted = faults && std::string_view(faults) == detail::kCompileServerFaultsValue;
  std::string line;
  while (std::getline(std::cin, line)) {
    if (line.empty()) continue;
    if (planted) planted_fault(line);
    // Made again if removed meanwhile: NVRTC fails a compile whose PCH folder is gone.
    std::error_code ec;
    if (!pch_dir.empty()) std::filesystem::create_directories(pch_dir, ec);
    print_answer(compile_request(line, pch_dir));
  }
  return 0;
}

}  // namespace tessera
