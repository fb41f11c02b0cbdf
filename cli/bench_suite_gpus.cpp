#include "cli/bench_suite_gpus.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <fstream>
#include <iterator>
#include <optional>
#include <sstream>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "bench/ceiling.hpp"
#include "bench/suite.hpp"
#include "bench/table.hpp"
#include "core/error.hpp"
#include "core/fs.hpp"
#include "core/progress.hpp"
#include "confine/confine.hpp"
#include "harness/subprocess.hpp"

namespace tessera::cli {

namespace {

namespace fs = std::filesystem;

constexpr auto kPoll = std::chrono::milliseconds(250);
constexpr std::size_t kLogTailBytes = 600;

fs::path shards_dir(const bench::RunWriter& w) { return w.dir() / "gpus"; }
fs::path shard_run(const bench::RunWriter& w, int device) { return shards_dir(w) / fmt::format("gpu{}", device); }
constexpr const char* kClaimsPrefix = "claims-";

// This session's claims folder (bench/claims.hpp), made empty. Every earlier
// session's goes: a child of a killed session still measuring then finds its
// folder gone and takes no more shapes (its records merge on the next run).
fs::path fresh_claims_dir(const bench::RunWriter& w) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(shards_dir(w)))
    if (entry.path().filename().string().rfind(kClaimsPrefix, 0) == 0) fs::remove_all(entry.path(), ec);
  const fs::path dir = shards_dir(w) / fmt::format("{}{}", kClaimsPrefix, ::getpid());
  fs::create_directories(dir);
  return dir;
}

// Longest first, by the shape's FLOPs: the children take the queue in this
// order, so the last shapes taken are the shortest and the GPUs finish
// together (on the grid a shape's time grows with its FLOPs, from 0.1 s to
// 22 s for baselines alone).
void longest_first(std::vector<const Task*>& todo) {
  std::stable_sort(todo.begin(), todo.end(), [](const Task* a, const Task* b) { return a->flops() > b->flops(); });
}

// A child's folder, read while it runs: the records after `offset` (bytes of
// its results.jsonl already read) that end in a newline; a line the child is
// still writing waits for the next read.
struct ShardReader {
  int device = -1;
  fs::path dir;
  std::streamoff offset = 0;
};

// Appends the records of `shard` that are new since its last read and not in
// the run yet, each naming its GPU. Returns how many.
int merge_new_records(bench::RunWriter& writer, ShardReader& shard) {
  std::ifstream in(shard.dir / bench::kResultsFile, std::ios::binary);
  if (!in) return 0;  // the child has not recorded a shape yet
  in.seekg(shard.offset);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto end = text.rfind('\n');
  if (end == std::string::npos) return 0;
  int merged = 0;
  std::istringstream lines(text.substr(0, end + 1));
  for (std::string line; std::getline(lines, line);) {
    if (line.empty()) continue;
    const auto j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded()) continue;  // not a record (a damaged disk): the shape stays unrecorded, measured again later
    bench::ShapeRecord r = bench::record_from_json(j);
    if (writer.finished().count(r.task.id())) continue;
    r.gpu = shard.device;
    writer.append(r);
    ++merged;
  }
  shard.offset += std::streamoff(end + 1);
  return merged;
}

// A `search:` child keeps each shape's search in <child>/search/<task id>/:
// moved to <run>/search/<task id>/, where one GPU's sweep keeps it, before the
// child's folder goes. A folder of the same shape from an earlier attempt is
// replaced, as the search measurer itself replaces it.
void keep_searches(const bench::RunWriter& writer, const fs::path& shard) {
  std::error_code ec;
  if (!fs::is_directory(shard / "search", ec)) return;
  fs::create_directories(writer.dir() / "search");
  for (const auto& entry : fs::directory_iterator(shard / "search")) {
    const fs::path to = writer.dir() / "search" / entry.path().filename();
    fs::remove_all(to, ec);
    fs::rename(entry.path(), to, ec);
    if (ec) throw Error(fmt::format("cannot move {} to {}: {}", entry.path().string(), to.string(), ec.message()));
  }
}

// Every child folder under <run>/gpus/ that no child is writing now: its
// records the run does not have yet merged, its searches kept, the folder
// removed. A child of a session that was killed may still be measuring: its
// folder is locked, and waits for the next run (a new child for that GPU then
// says the folder is busy).
int merge_finished_shards(bench::RunWriter& writer) {
  int merged = 0;
  std::error_code ec;
  if (!fs::is_directory(shards_dir(writer), ec)) return 0;
  for (const auto& entry : fs::directory_iterator(shards_dir(writer))) {
    const std::string name = entry.path().filename().string();
    if (!entry.is_directory() || name.rfind("gpu", 0) != 0 || !fs::exists(entry.path() / bench::kConfigFile)) continue;
    if (bench::run_is_being_written(entry.path())) continue;
    ShardReader shard{std::stoi(name.substr(3)), entry.path(), 0};
    merged += merge_new_records(writer, shard);
    keep_searches(writer, entry.path());
    fs::remove_all(entry.path(), ec);
  }
  return merged;
}

void rewrite_tables(const bench::RunWriter& writer) {
  const bench::Run run = bench::load_run(writer.dir());
  bench::write_tables(run, bench::resolve_ceiling(run.records));
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

// A child `tessera bench suite`, output to `log`, with this environment (the
// cache folder, the GPUs), in a process group of its own: a Ctrl-C at the
// terminal reaches the parent only, which passes one SIGINT on to each child
// (each then finishes its shape), and so does a SIGINT sent to the parent
// alone (a job scheduler's). A second Ctrl-C ends the parent; the children
// still finish their shape, and the next run merges them.
pid_t start_child(const std::vector<std::string>& args, const fs::path& log) {
  SpawnFiles files;
  files.out = log;  // stderr too
  files.append = true;
  files.mode = 0644;
  std::string why;
  const pid_t pid = spawn_process(tessera_executable(), args, current_environment(), files, {}, &why);
  if (pid < 0) throw Error(why);
  return pid;
}

std::string log_tail(const fs::path& log) {
  const std::string text = read_file(log);
  std::string tail = text.size() > kLogTailBytes ? text.substr(text.size() - kLogTailBytes) : text;
  while (!tail.empty() && tail.back() == '\n') tail.pop_back();
  return tail;
}

struct Child {
  ShardReader shard;
  pid_t pid;
  fs::path log;
  std::optional<int> exit_code;
};

}  // namespace

GpuSweepOutcome run_suite_on_gpus(bench::RunWriter& writer, const bench::RunConfig& config, const GpuSweep& sweep,
                                  const std::atomic<bool>& stop) {
  if (sweep.devices.size() < 2) throw Error("run_suite_on_gpus: give two or more GPUs");
  GpuSweepOutcome out;
  out.measured = merge_finished_shards(writer);  // a session cut off before it merged
  std::vector<const Task*> todo;
  for (const auto& t : config.tasks)
    if (!writer.finished().count(t.id())) todo.push_back(&t);
  longest_first(todo);
  const std::size_t n = std::min(sweep.devices.size(), todo.size());
  std::vector<Child> children;
  fs::create_directories(shards_dir(writer));
  // One queue: every child gets every shape and measures those it claims first.
  const fs::path tasks = shards_dir(writer) / "tasks.json";
  write_shard_tasks(config, todo, tasks);
  const fs::path claims = fresh_claims_dir(writer);
  for (std::size_t k = 0; k < n && !stop; ++k) {
    const int d = sweep.devices[k];
    // A search kept for a shape cut in its tune lives in the run's search/, whichever GPU measured it
    // and whichever claims the shape next (a shape is one child's at a time).
    std::vector<std::string> args = {"bench", "suite", "--tasks", tasks.string(), "--out", shard_run(writer, d).string(),
                                     "--device", std::to_string(d), "--claims", claims.string(), "--no-progress",
                                     "--kept-searches", (writer.dir() / "search").string()};
    args.insert(args.end(), sweep.child_args.begin(), sweep.child_args.end());
    const fs::path log = shards_dir(writer) / fmt::format("gpu{}.log", d);
    children.push_back({{d, shard_run(writer, d), 0}, start_child(args, log), log, std::nullopt});
  }
  std::optional<ProgressBar> bar;
  if (sweep.progress && !children.empty()) bar.emplace("bench suite");
  // The children's records join the run as they come (results.jsonl, and the
  // tables every kTablesEveryShapes), so a report during the sweep sees them.
  int merged_live = 0, since_tables = 0;
  bool stop_passed_on = false;
  for (;;) {
    if (stop && !stop_passed_on) {
      for (const auto& c : children)
        if (!c.exit_code) ::kill(c.pid, SIGINT);
      stop_passed_on = true;
    }
    std::size_t running = 0;
    for (auto& c : children) {
      if (!c.exit_code) {
        int status = 0;
        const pid_t w = ::waitpid(c.pid, &status, WNOHANG);
        if (w == c.pid) c.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        else if (w < 0 && errno != EINTR) c.exit_code = -1;
      }
      running += c.exit_code ? 0 : 1;
      const int m = merge_new_records(writer, c.shard);
      merged_live += m;
      since_tables += m;
    }
    if (since_tables >= bench::kTablesEveryShapes) {
      rewrite_tables(writer);
      since_tables = 0;
    }
    if (bar)
      bar->update(double(merged_live) / double(std::max<std::size_t>(1, todo.size())),
                  fmt::format("{}/{} shapes on {} GPUs ({} running)", merged_live, todo.size(), children.size(),
                              running));
    if (running == 0) break;
    std::this_thread::sleep_for(kPoll);
  }
  if (bar) bar->clear();
  out.measured += merged_live + merge_finished_shards(writer);
  std::error_code ec;
  fs::remove_all(claims, ec);  // the shapes claimed and not recorded (a stop, a failure) are the next run's
  for (const auto& c : children) {
    if (*c.exit_code == 0) continue;
    out.stopped.push_back(
        c.exit_code == kExitStoppedEarly
            ? fmt::format("GPU {} stopped before the queue was empty", c.shard.device)
            : fmt::format("GPU {} failed (exit {}): {}", c.shard.device, *c.exit_code, log_tail(c.log)));
  }
  if (stop && children.size() < n) out.stopped.push_back("interrupted before every GPU started");
  out.complete = writer.finished().size() >= config.tasks.size();
  return out;
}

}  // namespace tessera::cli
