#include "harness/subprocess.hpp"

#include <unistd.h>

#include <cstdlib>

#include <fstream>
#include <random>
#include <thread>
#include <system_error>

#include <boost/process.hpp>
#include <fmt/format.h>

#include "confine/confine.hpp"
#include "core/error.hpp"
#include "harness/detail/subprocess_env.hpp"

namespace bp = boost::process;

namespace tessera {

namespace {

constexpr auto kPollInterval = std::chrono::milliseconds(5);

std::string read_prefix(const std::filesystem::path& p, std::size_t limit) {
  std::ifstream in(p, std::ios::binary);
  std::string s(limit, '\0');
  in.read(s.data(), static_cast<std::streamsize>(limit));
  s.resize(static_cast<std::size_t>(in.gcount()));
  std::error_code ec;
  const auto size = std::filesystem::file_size(p, ec);
  if (!ec && size > limit) s += fmt::format("\n[output truncated: {} bytes in total]", size);
  return s;
}

// Removes the scratch files whatever happens.
struct ScratchFiles {
  std::filesystem::path in, out, err;
  ~ScratchFiles() noexcept {
    std::error_code ec;
    for (auto* p : {&in, &out, &err}) std::filesystem::remove(*p, ec);
  }
};

}  // namespace

ProcessResult run_process(const std::filesystem::path& exe, const std::vector<std::string>& args,
                          const std::string& stdin_data, double timeout_seconds, std::size_t output_limit,
                          const std::filesystem::path& work_dir) {
  ProcessResult r;
  std::filesystem::create_directories(work_dir);
  thread_local std::mt19937_64 rng{std::random_device{}()};
  const auto stem = work_dir / fmt::format("proc{:x}", rng());
  ScratchFiles f{stem.string() + ".in", stem.string() + ".out", stem.string() + ".err"};
  {
    std::ofstream in(f.in, std::ios::binary);
    in << stdin_data;
  }
  try {
    // Compilers get the allow-listed environment: a candidate's source
    // reaches them, and nothing of the user's secrets should.
    bp::group group;
    bp::child child(bp::exe = exe.string(), bp::args = args, bp::std_in < f.in.string(),
                    bp::std_out > f.out.string(), bp::std_err > f.err.string(), bp::start_dir = work_dir.string(),
                    group, detail::ExactEnvironment(sandbox_environment(current_environment())));
    // Poll instead of child.wait_for(): Boost.Process v1 waits for SIGCHLD
    // there, and with several threads waiting one can swallow another's signal
    // and sit out its whole time limit.
    const auto deadline = std::chrono::steady_clock::now() +
                          std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                              std::chrono::duration<double>(timeout_seconds));
    std::error_code ec;
    while (child.running(ec)) {
      if (std::chrono::steady_clock::now() >= deadline) {
        r.timed_out = true;
        group.terminate(ec);
        child.wait(ec);
        break;
      }
      std::this_thread::sleep_for(kPollInterval);
    }
    if (!r.timed_out) r.exit_code = child.exit_code();
  } catch (const std::exception& e) {
    r.spawn_failed = true;
    r.error = fmt::format("cannot run {}: {}", exe.string(), e.what());
    return r;
  }
  r.output = read_prefix(f.out, output_limit);
  r.output += read_prefix(f.err, output_limit > r.output.size() ? output_limit - r.output.size() : 0);
  return r;
}

std::filesystem::path self_executable() {
  std::error_code ec;
  auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) throw Error("cannot resolve /proc/self/exe");
  return p;
}

std::filesystem::path tessera_executable() {
  if (const char* env = std::getenv("TESSERA_BINARY"); env && *env) return env;
  const auto self = self_executable();
  if (self.filename() == "tessera") return self;
  std::error_code ec;
  for (auto dir = self.parent_path(); !dir.empty() && dir != dir.root_path(); dir = dir.parent_path()) {
    for (const auto& candidate : {dir / "tessera", dir / "bin" / "tessera"}) {
      if (std::filesystem::is_regular_file(candidate, ec) && candidate != self) return candidate;
    }
    if (std::filesystem::exists(dir / "CMakeCache.txt", ec)) break;  // top of the build tree
  }
  throw Error(Error::Kind::unavailable,
              "cannot find the tessera binary (needed for sandboxed compiles and workers): set TESSERA_BINARY");
}

}  // namespace tessera
