#pragma once
// A sweep's tasks as one queue shared by sibling processes (bench suite
// --gpus): every child is given every task, in the same order, and measures
// only those it claims first. A claim is a file created with O_EXCL in the
// session's claims folder, so two processes never measure one shape, and a
// GPU that finishes early takes the next shape instead of idling while
// another works through a share fixed in advance (round robin left the
// 1000-shape grid's GPUs between 155 and 236 s of work).
#include <filesystem>

#include "core/task.hpp"

namespace tessera::bench {

class TaskClaims {
public:
  // `dir` is the session's claims folder; it must exist (bad_input otherwise).
  explicit TaskClaims(std::filesystem::path dir);

  // True when this process now holds `task`. False when another process
  // claimed it, or when the folder is gone: its session ended (the parent of a
  // later session removes it), so a child left over from a killed session
  // takes no more work. Any other failure to create the claim throws.
  bool claim(const Task& task) const;

  const std::filesystem::path& dir() const { return dir_; }

private:
  std::filesystem::path dir_;
};

}  // namespace tessera::bench
