#pragma once
// Task files (datasets/*.json): {"name": ..., "description": ..., "tasks": [task, ...]}
// or a bare array of tasks; each task is the task object of docs/contracts.md, or a
// "MxNxK" string (layout TN).
#include <filesystem>
#include <vector>

#include "core/task.hpp"

namespace tessera {

// Throws bad_input naming the file (and the entry) on any problem. Duplicate
// tasks are an error: they would split one task's budget in two.
std::vector<Task> load_tasks_file(const std::filesystem::path& path);

}  // namespace tessera
