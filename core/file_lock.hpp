#pragma once
// An exclusive lock that every process of the machine sees: flock(2) on one
// file. The kernel lets it go when the holder's last descriptor closes, so a
// process that dies (SIGKILL included) never leaves it taken. flock locks
// belong to an open file description: two FileLocks on one path conflict
// even inside one process, as two processes' do.
#include <chrono>
#include <filesystem>
#include <functional>

namespace tessera {

class FileLock {
public:
  // Opens `path`, creating it and its folder when missing. `shared`: a folder
  // it creates is world-writable with the sticky bit (like /tmp) and a file
  // it creates is 0666, so that processes of several users share the lock.
  // Throws Error (unavailable) naming the path when the file cannot be opened.
  explicit FileLock(std::filesystem::path path, bool shared = false);
  ~FileLock() noexcept;  // closing the file lets the lock go
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

  // Takes the lock when it is free; false, at once, when another holds it.
  bool try_lock();
  // Takes the lock, waiting as long as another holds it. While it waits it
  // calls `keep_alive` every `period` (on this thread). When keep_alive
  // throws, the wait goes on without it until the lock comes (a blocked
  // flock cannot be called off); the lock is then let go and the exception
  // passes on.
  void lock(const std::function<void()>& keep_alive, std::chrono::milliseconds period);
  void lock();  // waits, silently
  void unlock() noexcept;
  bool owns_lock() const { return held_; }
  const std::filesystem::path& path() const { return path_; }

private:
  std::filesystem::path path_;
  int fd_ = -1;
  bool held_ = false;
};

}  // namespace tessera
