#include "core/tasks_file.hpp"

#include <set>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/fs.hpp"

namespace tessera {

std::vector<Task> load_tasks_file(const std::filesystem::path& path) {
  const std::string text = read_file(path);
  const auto j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded()) fail_bad_input(path.string() + ": not valid JSON");
  const nlohmann::json* list = &j;
  if (j.is_object()) {
    if (!j.contains("tasks")) fail_bad_input(path.string() + ": expected a \"tasks\" array");
    list = &j.at("tasks");
  }
  if (!list->is_array() || list->empty()) fail_bad_input(path.string() + ": \"tasks\" must be a non-empty array");
  std::vector<Task> tasks;
  std::set<std::string> ids;
  for (std::size_t i = 0; i < list->size(); ++i) {
    const auto& e = (*list)[i];
    Task t;
    try {
      t = e.is_string() ? task_from_shape(e.get<std::string>()) : parse_task(e);
    } catch (const Error& err) {
      fail_bad_input(path.string() + ": task " + std::to_string(i) + ": " + err.what());
    }
    if (!ids.insert(t.id()).second) fail_bad_input(path.string() + ": task " + t.id() + " is listed twice");
    tasks.push_back(t);
  }
  return tasks;
}

}  // namespace tessera
