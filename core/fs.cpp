#include "core/fs.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>

#include <fmt/chrono.h>
#include <fmt/format.h>

#include "core/error.hpp"

namespace tessera {

std::string read_file(const std::filesystem::path& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) fail_bad_input(fmt::format("file not found: {}", path.string()));
  if (std::filesystem::is_directory(path, ec)) fail_bad_input(fmt::format("is a directory, not a file: {}", path.string()));
  std::ifstream in(path, std::ios::binary);
  if (!in) fail_bad_input(fmt::format("cannot open {}: {}", path.string(), std::strerror(errno)));
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

namespace {
void write_all(int fd, std::string_view data, const std::string& what) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      throw Error(fmt::format("write {} failed: {}", what, std::strerror(errno)));
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
}

// Owns a file descriptor; closes it on every path.
class Fd {
public:
  explicit Fd(int fd) : fd_(fd) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() noexcept {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }

private:
  int fd_;
};
}  // namespace

void atomic_write_file(const std::filesystem::path& path, std::string_view data) {
  if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path());
  thread_local std::mt19937_64 rng{std::random_device{}()};
  auto tmp = path;
  tmp += fmt::format(".tmp{:x}", rng());
  {
    Fd fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
    if (fd.get() < 0) throw Error(fmt::format("cannot create {}: {}", tmp.string(), std::strerror(errno)));
    write_all(fd.get(), data, tmp.string());
    if (::fsync(fd.get()) != 0) throw Error(fmt::format("fsync {} failed: {}", tmp.string(), std::strerror(errno)));
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::filesystem::remove(tmp, ec);
    throw Error(fmt::format("rename into {} failed", path.string()));
  }
}

void append_line_durable(const std::filesystem::path& path, std::string_view line) {
  if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path());
  Fd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644));
  if (fd.get() < 0) throw Error(fmt::format("cannot open {}: {}", path.string(), std::strerror(errno)));
  std::string buf(line);
  buf.push_back('\n');
  write_all(fd.get(), buf, path.string());
  if (::fsync(fd.get()) != 0) throw Error(fmt::format("fsync {} failed: {}", path.string(), std::strerror(errno)));
}

std::filesystem::path cache_dir() {
  if (const char* d = std::getenv("TESSERA_CACHE_DIR"); d && *d) return d;
  if (const char* d = std::getenv("XDG_CACHE_HOME"); d && *d) return std::filesystem::path(d) / "tessera";
  if (const char* h = std::getenv("HOME"); h && *h) return std::filesystem::path(h) / ".cache" / "tessera";
  return std::filesystem::temp_directory_path() / "tessera-cache";
}

std::string utc_now_iso() {
  auto now = std::chrono::system_clock::now();
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  return fmt::format("{:%Y-%m-%dT%H:%M:%S}.{:03d}Z", fmt::gmtime(std::chrono::system_clock::to_time_t(now)), ms);
}

void require_extension(const std::filesystem::path& file, std::string_view extension, std::string_view option,
                       std::string_view what) {
  if (file.extension() != extension)
    fail_bad_input(fmt::format("{} {}: {}: give a file name that ends in {}", option, file.string(), what, extension));
}

}  // namespace tessera
