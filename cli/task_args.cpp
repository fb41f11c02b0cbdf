#include "cli/task_args.hpp"

#include "core/error.hpp"

namespace tessera::cli {

void add_task_options(CLI::App* cmd, TaskArgs& a) {
  cmd->add_option("--task", a.task_json, R"(task as JSON, e.g. '{"op":"hgemm","m":4096,"n":4096,"k":4096,"layout":"TN"}')");
  cmd->add_option("--shape", a.shape, "task shape MxNxK, e.g. 4096x4096x4096");
  cmd->add_option("--layout", a.layout, "TN (B is NxK row-major) or NN (B is KxN row-major)")->capture_default_str();
  cmd->add_option("--epilogue", a.epilogue, "none, bias, bias_relu or bias_gelu")->capture_default_str();
}

Task resolve_task(const TaskArgs& a) {
  if (!a.task_json.empty() && !a.shape.empty()) fail_bad_input("give either --task or --shape, not both");
  if (!a.task_json.empty()) return parse_task_string(a.task_json);
  if (!a.shape.empty()) return task_from_shape(a.shape, a.layout, a.epilogue);
  fail_bad_input("no task: give --shape MxNxK (e.g. --shape 4096x4096x4096) or --task JSON");
}

}  // namespace tessera::cli
