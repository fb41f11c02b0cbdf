#include "bench/claims.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/hash.hpp"

namespace tessera::bench {

TaskClaims::TaskClaims(std::filesystem::path dir) : dir_(std::move(dir)) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir_, ec))
    fail_bad_input(fmt::format("no claims folder {} (bench suite --gpus makes it for its children)", dir_.string()));
}

bool TaskClaims::claim(const Task& task) const {
  // Named by a hash of the task id: ids hold characters a file name should not.
  const std::filesystem::path file = dir_ / content_hash(task.id());
  const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd >= 0) {
    ::close(fd);
    return true;
  }
  if (errno == EEXIST || errno == ENOENT) return false;
  throw Error(Error::Kind::unavailable, fmt::format("cannot claim {} in {}: {}", task.id(), dir_.string(), std::strerror(errno)));
}

}  // namespace tessera::bench
