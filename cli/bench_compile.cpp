// `tessera bench harness --compile-batch 16,32`: NVRTC compile throughput in
// one process, as the pool and `tessera serve` compile (issue 37): N distinct
// variants of a device-only candidate compiled at once by N threads into a
// fresh cache, one process per compile (off) against the compile servers
// without (nopch) and with (pch) NVRTC's precompiled headers. Each batch runs
// twice: the first starts the servers, the second finds them running.
// Compile times are the records' (CompileInfo::ms: a compile's wait for a
// free server included).
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <unistd.h>

#include "cli/bench_commands.hpp"
#include "core/candidate.hpp"
#include "core/error.hpp"
#include "core/stats.hpp"
#include "harness/compiler.hpp"

namespace tessera::cli {

namespace {

// A define the kernel never reads: at the top, after the last #include line,
// or at the end. NVRTC's automatic PCH covers the source's initial run of
// preprocessor directives, so only `end` leaves that run the same in every
// variant: a define at the top or right after the includes is part of it.
std::string variant_source(const std::string& source, const std::string& tag, const std::string& where) {
  const std::string line = fmt::format("#define TESSERA_BENCH_VARIANT {}\n", tag);
  if (where == "top") return line + source;
  if (where == "end") return source + "\n" + line;
  std::size_t after = 0, at = 0;
  while ((at = source.find("#include", at)) != std::string::npos) {
    const auto end = source.find('\n', at);
    if (end == std::string::npos) return source + "\n" + line;
    if (at == 0 || source[at - 1] == '\n') after = end + 1;
    at = end;
  }
  return source.substr(0, after) + line + source.substr(after);
}

struct Batch {
  double wall_s = 0;
  std::vector<double> ms;
  int failed = 0;
  std::string first_failure;
};

Batch compile_batch(const std::string& source, const std::string& tag, int n, const std::string& at,
                    const std::filesystem::path& cache) {
  // One cache for every batch (each variant is new, so every compile is a
  // miss): emptying it would also remove the servers' working folder, and
  // the pool would start new servers for every batch.
  Compiler compiler({cache, kCompileTimeoutSeconds, true, {}});
  std::vector<CompileOutput> outs(static_cast<std::size_t>(n));
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<std::thread> threads;
  for (int i = 0; i < n; ++i)
    threads.emplace_back([&, i] {
      const CompileRequest r{CandidateKind::device_only, variant_source(source, fmt::format("{}_{}", tag, i), at),
                             kDefaultArch, {}};
      outs[static_cast<std::size_t>(i)] = compiler.compile(r);
    });
  for (auto& t : threads) t.join();
  Batch b;
  b.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  for (const auto& o : outs) {
    b.ms.push_back(o.info.ms);
    if (o.status != Status::ok && b.failed++ == 0) b.first_failure = o.reason;
  }
  return b;
}

}  // namespace

void run_compile_batches(const CompileBatchArgs& a) {
  for (const auto& m : a.servers)
    if (m != "off" && m != "nopch" && m != "pch")
      throw Error(Error::Kind::bad_input, fmt::format("--compile-servers: unknown '{}' (known: off, nopch, pch)", m));
  if (a.variant_at != "top" && a.variant_at != "after-includes" && a.variant_at != "end")
    throw Error(Error::Kind::bad_input, "--variant-at: top, after-includes or end");
  const auto base = load_candidate(a.source);
  if (base.kind != CandidateKind::device_only) throw Error(Error::Kind::bad_input, "--source: a device-only candidate");
  const auto cache = std::filesystem::temp_directory_path() / fmt::format("tessera-bench-compile-{}", ::getpid());
  std::filesystem::remove_all(cache);
  const char* old = std::getenv("TESSERA_COMPILE_SERVER");
  const std::string saved = old ? old : "";
  fmt::print("bench harness --compile-batch: {} variants (define {}), {} cores; each batch compiled twice\n",
             a.source, a.variant_at, std::thread::hardware_concurrency());
  fmt::print("{:<8}{:>5}{:>8}{:>9}{:>13}{:>12}{:>10}{:>9}\n", "servers", "N", "round", "wall s", "compiles/s",
             "median ms", "started", "failed");
  int tag = 0;
  for (const auto& mode : a.servers) {
    ::setenv("TESSERA_COMPILE_SERVER", mode.c_str(), 1);
    restart_compile_servers();
    for (int n : a.counts) {
      for (const char* round : {"first", "again"}) {
        const long long before = compile_servers_started();
        const Batch b = compile_batch(base.source, fmt::format("{}_{}", mode, tag++), n, a.variant_at, cache);
        const long long started = compile_servers_started() - before;
        fmt::print("{:<8}{:>5}{:>8}{:>9.2f}{:>13.1f}{:>12.0f}{:>10}{:>9}{}\n", mode, n, round, b.wall_s,
                   double(n) / b.wall_s, stats::upper_median(b.ms), started, b.failed,
                   b.failed ? "  first failure: " + b.first_failure : "");
        std::fflush(stdout);
      }
    }
  }
  restart_compile_servers();
  if (old) ::setenv("TESSERA_COMPILE_SERVER", saved.c_str(), 1);
  else ::unsetenv("TESSERA_COMPILE_SERVER");
  std::filesystem::remove_all(cache);
}

}  // namespace tessera::cli
