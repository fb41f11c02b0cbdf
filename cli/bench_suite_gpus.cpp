#include "cli/bench_suite_gpus.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <optional>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/fs.hpp"
#include "core/progress.hpp"
#include "harness/subprocess.hpp"

extern char** environ;

namespace tessera::cli {

namespace {

namespace fs = std::filesystem;

constexpr auto kPoll = std::chrono::milliseconds(250);
constexpr int kExitStoppedEarly = 5;  // a child's "shapes left" (as the parent's)
constexpr std::size_t kLogTailBytes = 600;

fs::path shards_dir(const bench::RunWriter& w) { return w.dir() / "gpus"; }
fs::path shard_run(const bench::RunWriter& w, int device) { return shards_dir(w) / fmt::format("gpu{}", device); }

// The records of every child run folder under <run>/gpus/ that the run does not
// have yet, appended with their GPU; the child folders go once merged.
int merge_shards(bench::RunWriter& writer) {
  int merged = 0;
  std::error_code ec;
  if (!fs::is_directory(shards_dir(writer), ec)) return 0;
  for (const auto& entry : fs::directory_iterator(shards_dir(writer))) {
    const std::string name = entry.path().filename().string();
    if (!entry.is_directory() || name.rfind("gpu", 0) != 0 || !fs::exists(entry.path() / bench::kConfigFile)) continue;
    const int device = std::stoi(name.substr(3));
    // A child of a session that was killed may still be measuring: its records
    // wait for the next merge (and a new child for that GPU says the folder is busy).
    if (bench::run_is_being_written(entry.path())) continue;
    const bench::Run shard = bench::load_run(entry.path());
    for (bench::ShapeRecord r : shard.records) {
      if (writer.finished().count(r.task.id())) continue;
      r.gpu = device;
      writer.append(r);
      ++merged;
    }
    fs::remove_all(entry.path(), ec);
  }
  return merged;
}

// The run's task file with only `tasks` in it (its name, buckets and other
// keys kept, so the child's records land in the same buckets).
void write_shard_tasks(const bench::RunConfig& config, const std::vector<const Task*>& tasks, const fs::path& file) {
  auto j = nlohmann::json::parse(read_file(config.tasks_file), nullptr, false);
  if (!j.is_object()) j = nlohmann::json::object();
  j["name"] = config.task_set;
  j["tasks"] = nlohmann::json::array();
  for (const Task* t : tasks) j["tasks"].push_back(to_json(*t));
  atomic_write_file(file, j.dump(1) + "\n");
}

// A child `tessera bench suite`, output to `log`, in this process group (so
// Ctrl-C reaches it) and with this environment (the cache folder, the GPUs).
pid_t start_child(const std::vector<std::string>& args, const fs::path& log) {
  const std::string exe = tessera_executable().string();
  std::vector<std::string> all{exe};
  all.insert(all.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : all) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  if (::posix_spawn_file_actions_init(&actions) != 0) throw Error("cannot prepare a bench suite child");
  const std::string log_s = log.string();
  int rc = ::posix_spawn_file_actions_addopen(&actions, 1, log_s.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  if (!rc) rc = ::posix_spawn_file_actions_adddup2(&actions, 1, 2);
  pid_t pid = -1;
  if (!rc) rc = ::posix_spawn(&pid, exe.c_str(), &actions, nullptr, argv.data(), environ);
  ::posix_spawn_file_actions_destroy(&actions);
  if (rc) throw Error(fmt::format("cannot start {}: {}", exe, std::strerror(rc)));
  return pid;
}

std::size_t lines_in(const fs::path& file) {
  std::ifstream in(file);
  std::size_t n = 0;
  for (std::string line; std::getline(in, line);) n += line.empty() ? 0 : 1;
  return n;
}

std::string log_tail(const fs::path& log) {
  const std::string text = read_file(log);
  std::string tail = text.size() > kLogTailBytes ? text.substr(text.size() - kLogTailBytes) : text;
  while (!tail.empty() && tail.back() == '\n') tail.pop_back();
  return tail;
}

struct Child {
  int device;
  pid_t pid;
  std::size_t shapes;
  fs::path log;
  std::optional<int> exit_code;
};

}  // namespace

GpuSweepOutcome run_suite_on_gpus(bench::RunWriter& writer, const bench::RunConfig& config, const GpuSweep& sweep,
                                  const std::atomic<bool>& stop) {
  if (sweep.devices.size() < 2) throw Error("run_suite_on_gpus: give two or more GPUs");
  GpuSweepOutcome out;
  out.measured = merge_shards(writer);  // a session cut off before it merged
  std::vector<const Task*> todo;
  for (const auto& t : config.tasks)
    if (!writer.finished().count(t.id())) todo.push_back(&t);
  const std::size_t n = std::min(sweep.devices.size(), todo.size());
  std::vector<std::vector<const Task*>> shares(n);
  for (std::size_t i = 0; i < todo.size(); ++i) shares[i % n].push_back(todo[i]);  // round robin: sizes mix
  std::vector<Child> children;
  fs::create_directories(shards_dir(writer));
  for (std::size_t k = 0; k < n && !stop; ++k) {
    const int d = sweep.devices[k];
    const fs::path tasks = shards_dir(writer) / fmt::format("gpu{}.tasks.json", d);
    write_shard_tasks(config, shares[k], tasks);
    std::vector<std::string> args = {"bench", "suite", "--tasks", tasks.string(), "--out",
                                     shard_run(writer, d).string(), "--device", std::to_string(d), "--no-progress"};
    args.insert(args.end(), sweep.child_args.begin(), sweep.child_args.end());
    const fs::path log = shards_dir(writer) / fmt::format("gpu{}.log", d);
    children.push_back({d, start_child(args, log), shares[k].size(), log, std::nullopt});
  }
  std::optional<ProgressBar> bar;
  if (sweep.progress && !children.empty()) bar.emplace("bench suite");
  for (;;) {
    std::size_t running = 0, done = 0;
    for (auto& c : children) {
      if (!c.exit_code) {
        int status = 0;
        const pid_t w = ::waitpid(c.pid, &status, WNOHANG);
        if (w == c.pid) c.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        else if (w < 0 && errno != EINTR) c.exit_code = -1;
      }
      running += c.exit_code ? 0 : 1;
      done += lines_in(shard_run(writer, c.device) / bench::kResultsFile);
    }
    if (bar)
      bar->update(double(done) / double(std::max<std::size_t>(1, todo.size())),
                  fmt::format("{}/{} shapes on {} GPUs ({} running)", done, todo.size(), children.size(), running));
    if (running == 0) break;
    std::this_thread::sleep_for(kPoll);
  }
  if (bar) bar->clear();
  out.measured += merge_shards(writer);
  for (const auto& c : children) {
    if (*c.exit_code == 0) continue;
    out.stopped.push_back(c.exit_code == kExitStoppedEarly
                              ? fmt::format("GPU {} stopped before the end of its {} shapes", c.device, c.shapes)
                              : fmt::format("GPU {} failed (exit {}): {}", c.device, *c.exit_code, log_tail(c.log)));
  }
  if (stop && children.size() < n) out.stopped.push_back("interrupted before every GPU started");
  out.complete = writer.finished().size() >= config.tasks.size();
  return out;
}

}  // namespace tessera::cli
