#include "core/file_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <exception>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include "core/error.hpp"

namespace tessera {

namespace {

constexpr mode_t kSharedFolderMode = 01777;  // anyone may add a file, only its owner remove it (as /tmp)
constexpr mode_t kSharedFileMode = 0666;     // anyone may open it; flock needs no more than reading
constexpr mode_t kPrivateFileMode = 0644;

[[noreturn]] void fail_open(const std::filesystem::path& path, const std::string& why) {
  throw Error(Error::Kind::unavailable, fmt::format("cannot open the lock file {}: {}", path.string(), why));
}

// The folder, created when missing. A shared folder gets its mode set
// explicitly: mkdir's is cut by the umask (0022 leaves 0755, which would keep
// every other user out).
void make_folder(const std::filesystem::path& dir, bool shared) {
  if (dir.empty()) return;
  std::error_code ec;
  if (std::filesystem::is_directory(dir, ec)) return;
  if (dir.has_parent_path()) std::filesystem::create_directories(dir.parent_path(), ec);
  if (::mkdir(dir.c_str(), 0777) == 0) {
    if (shared) (void)::chmod(dir.c_str(), kSharedFolderMode);
  } else if (errno != EEXIST) {
    fail_open(dir, fmt::format("cannot create its folder: {}", std::strerror(errno)));
  }
}

int flock_retrying(int fd, int op) {
  int rc;
  while ((rc = ::flock(fd, op)) != 0 && errno == EINTR) {
  }
  return rc;
}

}  // namespace

FileLock::FileLock(std::filesystem::path path, bool shared) : path_(std::move(path)) {
  make_folder(path_.parent_path(), shared);
  // Read-only: flock needs no more, and a file another user created can be
  // opened even where their umask left it 0644.
  fd_ = ::open(path_.c_str(), O_RDONLY | O_CREAT | O_CLOEXEC, shared ? kSharedFileMode : kPrivateFileMode);
  if (fd_ < 0) fail_open(path_, std::strerror(errno));
  struct stat st{};
  if (shared && ::fstat(fd_, &st) == 0 && st.st_uid == ::geteuid() && (st.st_mode & 0777) != kSharedFileMode)
    (void)::fchmod(fd_, kSharedFileMode);  // the umask cut it; best effort, like the folder's
}

FileLock::~FileLock() noexcept {
  if (fd_ >= 0) ::close(fd_);
}

bool FileLock::try_lock() {
  if (held_) return true;
  if (flock_retrying(fd_, LOCK_EX | LOCK_NB) == 0) return held_ = true;
  if (errno != EWOULDBLOCK) throw Error(fmt::format("flock {} failed: {}", path_.string(), std::strerror(errno)));
  return false;
}

void FileLock::lock(const std::function<void()>& keep_alive, std::chrono::milliseconds period) {
  if (try_lock()) return;
  // The wait blocks in flock() on a thread of its own rather than trying
  // again every period: a blocked waiter is woken the moment the holder lets
  // go, while a poller asleep between tries loses to a holder that takes the
  // lock straight back (a busy process's next evaluation) and can wait for
  // many of its turns.
  struct Wait {
    std::mutex mu;
    std::condition_variable cv;
    bool done = false;
    int error = 0;
  } w;
  std::thread waiter([&w, fd = fd_] {
    const int rc = flock_retrying(fd, LOCK_EX);
    const int error = rc == 0 ? 0 : errno;
    std::lock_guard g(w.mu);
    w.error = error;
    w.done = true;
    w.cv.notify_all();
  });
  // A blocked flock() cannot be called off: when keep_alive throws, the wait
  // goes on (without it) until the lock comes, which is then let go.
  std::exception_ptr failed;
  {
    std::unique_lock g(w.mu);
    while (!w.cv.wait_for(g, period, [&] { return w.done; })) {
      if (failed) continue;
      g.unlock();
      try {
        keep_alive();
      } catch (...) {
        failed = std::current_exception();
      }
      g.lock();
    }
  }
  waiter.join();
  if (w.error != 0) throw Error(fmt::format("flock {} failed: {}", path_.string(), std::strerror(w.error)));
  if (failed) {
    (void)::flock(fd_, LOCK_UN);
    std::rethrow_exception(failed);
  }
  held_ = true;
}

void FileLock::lock() {
  if (held_) return;
  if (flock_retrying(fd_, LOCK_EX) != 0)
    throw Error(fmt::format("flock {} failed: {}", path_.string(), std::strerror(errno)));
  held_ = true;
}

void FileLock::unlock() noexcept {
  if (!held_) return;
  (void)::flock(fd_, LOCK_UN);
  held_ = false;
}

}  // namespace tessera
