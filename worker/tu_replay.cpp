#include "worker/tu_replay.hpp"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/fs.hpp"
#include "core/elf.hpp"
#include "core/wire_runner.hpp"
#include "worker/check.hpp"
#include "worker/child_process.hpp"
#include "worker/module.hpp"
#include "worker/tu_graph.hpp"

namespace tessera::worker {

namespace {

constexpr int kDefaultSharedLimit = 48 * 1024;  // above this a kernel must be allowed more dynamic shared memory
constexpr unsigned kPortableClusterSize = 8;    // larger clusters must be allowed explicitly
constexpr double kRunnerQuitSeconds = 2.0;

std::string self_exe() {
  char buf[4096];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) throw Error("cannot resolve /proc/self/exe");
  return std::string(buf, static_cast<std::size_t>(n));
}

constexpr std::size_t kRunnerLogTailBytes = 16 * 1024;  // what the worker log and a verdict quote

// The runner's stderr: a file in its scratch directory, so that the worker
// can read why the sandbox killed it (the runner names the forbidden call
// there) and quote it in its own log. Its size is bounded by the runner's
// file-size limit.
class RunnerLog {
public:
  explicit RunnerLog(const std::filesystem::path& path) : path_(path) {
    fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd_ < 0) throw Error(fmt::format("cannot create the runner's log {}", path.string()));
  }
  ~RunnerLog() {
    if (fd_ >= 0) ::close(fd_);
  }
  RunnerLog(const RunnerLog&) = delete;
  RunnerLog& operator=(const RunnerLog&) = delete;
  int fd() const { return fd_; }
  std::string tail() const {
    std::ifstream in(path_, std::ios::binary);
    if (!in) return {};
    in.seekg(0, std::ios::end);
    const std::streamoff size = in.tellg();
    const std::streamoff from = std::max<std::streamoff>(0, size - std::streamoff(kRunnerLogTailBytes));
    in.seekg(from);
    std::string out(static_cast<std::size_t>(size - from), '\0');
    in.read(out.data(), static_cast<std::streamsize>(out.size()));
    return out;
  }

private:
  std::filesystem::path path_;
  int fd_ = -1;
};

// The runner, confined (confine/confine.hpp): the allow-listed environment
// with HOME and TMPDIR in a scratch directory of its own inside the worker's
// (the worker's working directory), its rlimits, death with this thread;
// runner_main installs Landlock and seccomp itself.
ConfinedSpawn runner_spawn(const std::filesystem::path& scratch, int log_fd, int device) {
  ConfinedSpawn spec;
  spec.exe = self_exe();
  spec.args = {"__runner", "--device", std::to_string(device)};
  spec.env = runner_environment(scratch);
  spec.work_dir = scratch;
  spec.limits = runner_limits();
  spec.fds = {{STDERR_FILENO, log_fd}};
  return spec;
}

// The statuses a runner's error may carry; any other is a launch_error.
Status runner_error_status(Status s) {
  return s == Status::rejected || s == Status::timeout || s == Status::infra_error ? s : Status::launch_error;
}

std::string line_of(const nlohmann::json& message) { return message.dump(); }

// One replayed step: a kernel with its arguments, or a memset.
struct Step {
  CapturedNode node;
  CUfunction fn = nullptr;
  std::vector<void*> argp;  // into node.kernel.args; built once the step no longer moves
};

class CapturedTranslationUnit final : public GemmCallable {
public:
  CapturedTranslationUnit(const std::filesystem::path& so, const Task& task)
      : modules_(load_modules(so)),
        scratch_(std::filesystem::current_path(), "runner-"),
        log_(scratch_.path() / "runner.log"),
        runner_(runner_spawn(scratch_.path(), log_.fd(), current_device())),
        task_(task) {
    runner_.send_line(line_of(RunnerOpen{so.string(), task.m, task.n, task.k}));
    (void)expect(RunnerEventKind::ready, /*candidate_loaded=*/false);
    workspace_ = expect(RunnerEventKind::opened).workspace_bytes;
  }

  ~CapturedTranslationUnit() override {
    runner_.send_line(line_of(RunnerCommand{RunnerOp::quit, 0, {}}));
    if (!runner_.wait(kRunnerQuitSeconds).exited) runner_.kill();
    if (const std::string t = log_.tail(); !t.empty()) std::fprintf(stderr, "runner log (tail):\n%s\n", t.c_str());
  }

  void launch(const TesseraGemmParams& p, cudaStream_t stream) override {
    const auto& d = driver();
    for (auto& step : replay_for(p)) {
      CUresult r = CUDA_SUCCESS;
      if (step.node.kind == CapturedNode::Kind::kernel) {
        const auto& k = step.node.kernel;
        CUlaunchConfig cfg{};
        cfg.gridDimX = k.grid[0];
        cfg.gridDimY = k.grid[1];
        cfg.gridDimZ = k.grid[2];
        cfg.blockDimX = k.block[0];
        cfg.blockDimY = k.block[1];
        cfg.blockDimZ = k.block[2];
        cfg.sharedMemBytes = k.shared_bytes;
        cfg.hStream = stream;
        CUlaunchAttribute attr{};
        if (k.cluster[0] * std::max(1u, k.cluster[1]) * std::max(1u, k.cluster[2]) > 1) {
          attr.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
          attr.value.clusterDim.x = k.cluster[0];
          attr.value.clusterDim.y = std::max(1u, k.cluster[1]);
          attr.value.clusterDim.z = std::max(1u, k.cluster[2]);
          cfg.attrs = &attr;
          cfg.numAttrs = 1;
        }
        r = d.cuLaunchKernelEx(&cfg, step.fn, step.argp.data(), nullptr);
      } else {
        r = launch_memset(step.node.memset, reinterpret_cast<CUstream>(stream));
      }
      if (r != CUDA_SUCCESS) throw launch_fault("the replay of a captured launch was refused", r);
    }
  }

  unsigned long long workspace_bytes(const Task&) const override { return workspace_; }

  Resources resources() const override { return resources_; }

  // Captures the call for this parameter block now, so that no runner round
  // trip happens while the call is being timed.
  void prepare_params(TesseraGemmParams& p) const override { (void)replay_for(p); }

private:
  static int current_device() {
    int dev = 0;
    TESSERA_CUDA_CHECK(cudaGetDevice(&dev));
    return dev;
  }

  // The unit's device code: nvcc puts one fatbin container per compiled
  // part into the .nv_fatbin section, one after the other; each becomes a module.
  static std::vector<std::unique_ptr<Module>> load_modules(const std::filesystem::path& so) {
    auto section = read_section(read_file(so), ".nv_fatbin");
    if (!section || section->empty())
      throw CandidateFault{Status::launch_error, "the shared object carries no device code (.nv_fatbin)"};
    std::vector<std::unique_ptr<Module>> out;
    for (const auto& image : split_fatbins(*section)) out.push_back(std::make_unique<Module>(image));
    if (out.empty()) throw CandidateFault{Status::launch_error, "the shared object's device code is not a fatbin"};
    return out;
  }

  // The next event from the runner. Before "ready" no candidate code has run
  // in it, so a failure it reports is the machine's; after it, the
  // candidate's code can write the channel, so every failure is the
  // candidate's and a claim of a machine failure is a forgery.
  RunnerEvent expect(RunnerEventKind event, bool candidate_loaded = true) const {
    auto line = runner_.read_line(kRunnerTimeoutSeconds);
    if (!line) {
      if (runner_.timed_out()) {
        runner_.kill();
        throw CandidateFault{Status::timeout, fmt::format("the candidate's host code ran past {:.0f} s in the runner",
                                                          kRunnerTimeoutSeconds)};
      }
      const ChildExit e = runner_.wait(kRunnerQuitSeconds);
      if (const std::string why = confinement_exit_reason(e.wait_status, log_.tail()); !why.empty())
        throw CandidateFault{Status::rejected, why};
      throw CandidateFault{Status::runtime_fault,
                           fmt::format("the candidate's host code ended the runner ({})", e.describe())};
    }
    RunnerEvent got;
    try {
      got = read_strict<RunnerEvent>(nlohmann::json::parse(*line), "runner event");
    } catch (const std::exception&) {
      throw CandidateFault{Status::rejected, "the runner's channel carried a line tessera did not write"};
    }
    if (got.event == RunnerEventKind::error) {
      const Status st = runner_error_status(got.status);
      const std::string reason = got.reason.empty() ? std::string("runner error") : got.reason;
      if (st == Status::infra_error && candidate_loaded)
        throw CandidateFault{Status::rejected, "the runner's channel claimed a failure of the machine after the "
                                               "candidate's code was loaded (only the candidate could have written it): " + reason};
      throw CandidateFault{st, reason};
    }
    if (got.event != event)
      throw CandidateFault{Status::rejected, fmt::format("the runner's channel carried an unexpected '{}' event",
                                                        to_string(got.event))};
    return got;
  }

  CUfunction function(const std::string& name) const {
    if (auto it = functions_.find(name); it != functions_.end()) return it->second;
    const auto& d = driver();
    for (const auto& m : modules_) {
      CUfunction fn = nullptr;
      if (d.cuModuleGetFunction(&fn, m->get(), name.c_str()) == CUDA_SUCCESS) return functions_[name] = fn;
    }
    // Kernels of internal linkage (an anonymous namespace, `static`) may not
    // be found by name; every function of the module still has its name.
    for (const auto& m : modules_) {
      unsigned count = 0;
      if (d.cuModuleGetFunctionCount(&count, m->get()) != CUDA_SUCCESS || count == 0) continue;
      std::vector<CUfunction> fns(count);
      if (d.cuModuleEnumerateFunctions(fns.data(), count, m->get()) != CUDA_SUCCESS) continue;
      for (CUfunction fn : fns) {
        const char* n = nullptr;
        if (d.cuFuncGetName(&n, fn) == CUDA_SUCCESS && n && name == n) return functions_[name] = fn;
      }
    }
    throw CandidateFault{Status::rejected, "the capture names a kernel that is not in the unit's device code: " + name};
  }

  // Checks one captured kernel against the function the worker loaded.
  void admit_kernel(Step& step) const {
    const auto& k = step.node.kernel;
    step.fn = function(k.name);
    const auto& d = driver();
    for (std::size_t i = 0;; ++i) {
      std::size_t offset = 0, size = 0;
      if (d.cuFuncGetParamInfo(step.fn, i, &offset, &size) != CUDA_SUCCESS) {
        if (i != k.args.size())
          throw CandidateFault{Status::rejected, fmt::format("the capture of {} has {} arguments, the kernel {}",
                                                             k.name, k.args.size(), i)};
        break;
      }
      if (i >= k.args.size() || k.args[i].size() != size)
        throw CandidateFault{Status::rejected, fmt::format("the capture of {} does not match its argument list", k.name)};
    }
    if (k.shared_bytes > unsigned(kDefaultSharedLimit)) {
      const CUresult r = d.cuFuncSetAttribute(step.fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                              static_cast<int>(k.shared_bytes));
      if (r != CUDA_SUCCESS) throw launch_fault(fmt::format("cannot allow {} bytes of shared memory", k.shared_bytes), r);
    }
    if (k.cluster[0] * std::max(1u, k.cluster[1]) * std::max(1u, k.cluster[2]) > kPortableClusterSize)
      d.cuFuncSetAttribute(step.fn, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1);
    note_resources(step.fn, 1ull * k.grid[0] * k.grid[1] * k.grid[2] * k.block[0] * k.block[1] * k.block[2]);
  }

  // A memset may only write the output or the workspace.
  static void admit_memset(const CapturedMemset& m, const TesseraGemmParams& p, const Task& task) {
    const std::uint64_t extent = (m.height ? m.height - 1 : 0) * m.pitch + m.width * m.element_size;
    auto inside = [&](const void* base, std::uint64_t bytes) {
      const auto b = reinterpret_cast<std::uint64_t>(base);
      return base && m.dst >= b && m.dst + extent <= b + bytes;
    };
    if (!inside(p.C, std::uint64_t(task.m) * task.n * 2) && !inside(p.workspace, p.workspace_bytes))
      throw CandidateFault{Status::rejected, "the candidate's host code enqueued a memset outside its output and workspace"};
  }

  void note_resources(CUfunction fn, unsigned long long threads) const {
    if (threads <= main_threads_) return;
    main_threads_ = threads;
    resources_ = function_resources(fn);
  }

  std::vector<Step>& replay_for(const TesseraGemmParams& p) const {
    std::string key(reinterpret_cast<const char*>(&p), sizeof p);
    if (auto it = replays_.find(key); it != replays_.end()) return it->second;
    const long long id = static_cast<long long>(replays_.size());
    runner_.send_line(line_of(RunnerCommand{RunnerOp::capture, id, to_hex(&p, sizeof p)}));
    const auto captured = expect(RunnerEventKind::captured);
    CapturedCall call;
    try {
      call = captured_call_from_json(captured.call);
    } catch (const std::exception& e) {
      throw CandidateFault{Status::rejected, std::string("the runner sent a malformed capture: ") + e.what()};
    }
    std::vector<Step> steps;
    for (auto& node : call.nodes) steps.push_back({std::move(node), nullptr, {}});
    for (auto& step : steps) {
      if (step.node.kind == CapturedNode::Kind::kernel) admit_kernel(step);
      else admit_memset(step.node.memset, p, task_);
    }
    auto& kept = replays_[key] = std::move(steps);
    // Argument pointers last, once the steps sit where they will stay.
    for (auto& step : kept)
      for (auto& a : step.node.kernel.args) step.argp.push_back(a.data());
    return kept;
  }

  static CUresult launch_memset(const CapturedMemset& m, CUstream s) {
    const auto& d = driver();
    const CUdeviceptr dst = m.dst;
    if (m.height <= 1) {
      if (m.element_size == 1) return d.cuMemsetD8Async(dst, static_cast<unsigned char>(m.value), m.width, s);
      if (m.element_size == 2) return d.cuMemsetD16Async(dst, static_cast<unsigned short>(m.value), m.width, s);
      return d.cuMemsetD32Async(dst, m.value, m.width, s);
    }
    if (m.element_size == 1) return d.cuMemsetD2D8Async(dst, m.pitch, static_cast<unsigned char>(m.value), m.width, m.height, s);
    if (m.element_size == 2) return d.cuMemsetD2D16Async(dst, m.pitch, static_cast<unsigned short>(m.value), m.width, m.height, s);
    return d.cuMemsetD2D32Async(dst, m.pitch, m.value, m.width, m.height, s);
  }

  std::vector<std::unique_ptr<Module>> modules_;
  ScratchDir scratch_;  // the runner's working directory, removed after it ends
  RunnerLog log_;
  mutable ChildProcess runner_;
  Task task_;
  unsigned long long workspace_ = 0;
  mutable std::map<std::string, std::vector<Step>> replays_;  // by the bytes of the parameter block
  mutable std::map<std::string, CUfunction> functions_;
  mutable Resources resources_;
  mutable unsigned long long main_threads_ = 0;
};

}  // namespace

std::vector<std::string> split_fatbins(const std::string& section) {
  constexpr std::uint32_t kFatbinMagic = 0xBA55ED50;
  constexpr std::size_t kHeaderBytes = 16;  // magic (4), version (2), header size (2), payload size (8)
  std::vector<std::string> out;
  std::size_t pos = 0;
  while (pos + kHeaderBytes <= section.size()) {
    std::uint32_t magic = 0;
    std::uint16_t header = 0;
    std::uint64_t payload = 0;
    std::memcpy(&magic, section.data() + pos, 4);
    std::memcpy(&header, section.data() + pos + 6, 2);
    std::memcpy(&payload, section.data() + pos + 8, 8);
    if (magic != kFatbinMagic || header < kHeaderBytes || payload > section.size() - pos - header) break;
    out.push_back(section.substr(pos, header + payload));
    pos += header + payload;
    pos = (pos + 7) / 8 * 8;  // containers start 8-byte aligned
  }
  return out;
}

std::unique_ptr<GemmCallable> load_translation_unit(const std::filesystem::path& shared_object, const Task& task) {
  return std::make_unique<CapturedTranslationUnit>(shared_object, task);
}

}  // namespace tessera::worker
