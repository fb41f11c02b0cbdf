#pragma once
// Files a run keeps up to date besides its logs: best/<task>.cu and state.json.
#include <filesystem>
#include <string>

#include "search/method.hpp"
#include "search/state.hpp"

namespace tessera::search {

// The best kernel of a task as a standalone .cu: a comment header with what
// was measured, then the candidate's source unchanged.
std::string best_kernel_text(const TaskState& task);
void write_best_kernel(const std::filesystem::path& run_dir, const TaskState& task);
std::filesystem::path best_kernel_path(const std::filesystem::path& run_dir, const std::string& task_id);

// A readable snapshot (state.json): totals, best per task, archive sizes and
// the bandit's arm statistics. Written atomically after every step.
nlohmann::json state_summary(const SearchState& state, const SearchMethod& method, double elapsed_s);
void write_state_summary(const std::filesystem::path& run_dir, const SearchState& state, const SearchMethod& method,
                         double elapsed_s);

}  // namespace tessera::search
