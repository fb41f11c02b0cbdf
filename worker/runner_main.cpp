// `tessera __runner`: where a translation unit's host code runs. The worker
// starts one per evaluation of a translation unit. The runner loads the
// shared object and, for each parameter block the worker sends, calls
// tessera_launch under CUDA stream capture: nothing executes, the kernels and
// memsets it enqueues are recorded and sent back as a CapturedCall, and the
// worker launches them itself, under its own verification and timer. The
// runner holds no channel to the harness and nothing it says can pass for a
// verdict: it can only describe launches of the candidate's own kernels.
#include "worker/runner_main.hpp"

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/abi/tessera_abi.cuh"
#include "confine/confine.hpp"
#include "core/wire_runner.hpp"
#include "worker/channel.hpp"
#include "worker/driver.hpp"
#include "worker/tu_graph.hpp"

namespace tessera::worker {

namespace {

using LaunchFn = int (*)(const TesseraGemmParams*, cudaStream_t);
using WorkspaceFn = unsigned long long (*)(int, int, int);

CapturedNode kernel_node(cudaGraphNode_t node) {
  const auto& d = driver();
  CUDA_KERNEL_NODE_PARAMS kp{};
  if (d.cuGraphKernelNodeGetParams(reinterpret_cast<CUgraphNode>(node), &kp) != CUDA_SUCCESS)
    throw std::runtime_error("cannot read a captured kernel's parameters");
  if (kp.extra) throw std::runtime_error("a kernel launched with packed arguments (`extra`) cannot be replayed");
  CapturedNode n;
  const char* name = nullptr;
  if (d.cuFuncGetName(&name, kp.func) != CUDA_SUCCESS || !name) throw std::runtime_error("a captured kernel has no name");
  auto& k = n.kernel;
  k.name = name;
  k.grid = {kp.gridDimX, kp.gridDimY, kp.gridDimZ};
  k.block = {kp.blockDimX, kp.blockDimY, kp.blockDimZ};
  k.shared_bytes = kp.sharedMemBytes;
  for (std::size_t i = 0;; ++i) {
    std::size_t offset = 0, size = 0;
    if (d.cuFuncGetParamInfo(kp.func, i, &offset, &size) != CUDA_SUCCESS) break;
    k.args.emplace_back(static_cast<const char*>(kp.kernelParams[i]), size);
  }
  CUkernelNodeAttrValue cluster{};
  if (d.cuGraphKernelNodeGetAttribute(reinterpret_cast<CUgraphNode>(node), CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION,
                                      &cluster) == CUDA_SUCCESS)
    k.cluster = {cluster.clusterDim.x, cluster.clusterDim.y, cluster.clusterDim.z};
  return n;
}

CapturedNode memset_node(cudaGraphNode_t node) {
  cudaMemsetParams mp{};
  if (cudaGraphMemsetNodeGetParams(node, &mp) != cudaSuccess) throw std::runtime_error("cannot read a captured memset");
  CapturedNode n;
  n.kind = CapturedNode::Kind::memset;
  n.memset = {reinterpret_cast<std::uint64_t>(mp.dst), mp.value, mp.elementSize, mp.width, mp.height, mp.pitch};
  return n;
}

// The graph's nodes in creation order, which respects its dependencies (a
// node can only depend on nodes that existed when it was added).
CapturedCall describe(cudaGraph_t graph) {
  std::size_t count = 0;
  if (cudaGraphGetNodes(graph, nullptr, &count) != cudaSuccess) throw std::runtime_error("cannot list the captured graph");
  std::vector<cudaGraphNode_t> nodes(count);
  if (count && cudaGraphGetNodes(graph, nodes.data(), &count) != cudaSuccess)
    throw std::runtime_error("cannot list the captured graph");
  CapturedCall call;
  for (auto node : nodes) {
    cudaGraphNodeType type{};
    cudaGraphNodeGetType(node, &type);
    if (type == cudaGraphNodeTypeKernel) call.nodes.push_back(kernel_node(node));
    else if (type == cudaGraphNodeTypeMemset) call.nodes.push_back(memset_node(node));
    else if (type == cudaGraphNodeTypeEmpty) continue;
    else
      throw std::runtime_error(fmt::format("tessera_launch enqueued work of graph node type {} (only kernels and "
                                           "memsets are replayed: no host callbacks, copies, events or allocations)",
                                           static_cast<int>(type)));
  }
  return call;
}

RunnerEvent event(RunnerEventKind kind) {
  RunnerEvent e;
  e.event = kind;
  return e;
}

// One call of tessera_launch under capture. Any C++ exception from the
// candidate's host code is the candidate's failure.
RunnerEvent capture(LaunchFn launch, const TesseraGemmParams& p, long long id) {
  cudaStream_t s = cudaStreamPerThread;  // also where `<<<g, b>>>` goes under --default-stream per-thread
  if (cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal) != cudaSuccess)
    return runner_error(Status::infra_error, "the runner could not start a stream capture");
  int rc = 0;
  std::string threw;
  try {
    rc = launch(&p, s);
  } catch (const std::exception& e) {
    threw = e.what();
  } catch (...) {
    threw = "an exception that is not a std::exception";
  }
  cudaGraph_t graph = nullptr;
  const cudaError_t end = cudaStreamEndCapture(s, &graph);
  struct GraphGuard {
    cudaGraph_t g;
    ~GraphGuard() {
      if (g) cudaGraphDestroy(g);
    }
  } guard{graph};
  if (!threw.empty()) return runner_error(Status::launch_error, "the candidate's host code threw: " + threw);
  if (rc != 0) return runner_error(Status::launch_error, fmt::format("tessera_launch returned {}", rc));
  if (end != cudaSuccess || !graph)
    return runner_error(Status::launch_error,
                       fmt::format("tessera_launch did something that cannot be captured into a CUDA graph ({}): "
                                   "it may only enqueue kernels and memsets on the stream it is given, without "
                                   "synchronising, allocating or copying to the host", cudaGetErrorString(end)));
  // Work enqueued elsewhere ran for real, here, on pointers of another
  // process: it faults, and it would never have been timed.
  const cudaError_t sync = cudaDeviceSynchronize();
  if (sync != cudaSuccess)
    return runner_error(Status::rejected, fmt::format("the candidate launched work outside the stream it was given "
                                                      "(it ran in the runner and failed: {})", cudaGetErrorString(sync)));
  try {
    RunnerEvent captured = event(RunnerEventKind::captured);
    captured.id = id;
    captured.call = to_json(describe(graph));
    return captured;
  } catch (const std::exception& e) {
    return runner_error(Status::launch_error, e.what());
  }
}

}  // namespace

int runner_main(const RunnerConfig& config) {
  Channel ch;
  std::string line;
  if (!std::getline(std::cin, line)) return 1;
  RunnerOpen open;
  try {
    open = read_strict<RunnerOpen>(nlohmann::json::parse(line), "runner open");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "runner: bad first line: %s\n", e.what());
    return 1;
  }
  // Landlock binds the threads started after it, so it goes first; seccomp
  // binds every thread and goes once the CUDA context exists. The working
  // directory is the scratch directory the worker made for this runner.
  ProtectionReport protections;
  const std::string& artifact = open.artifact;
  try {
    const ConfinePolicy policy = runner_policy(std::filesystem::current_path(), {artifact});
    protections = confine_self(policy, ConfineStep::filesystem);
    cudaError_t err = cudaSetDevice(config.device);
    if (err == cudaSuccess) err = cudaFree(nullptr);
    if (err != cudaSuccess) {
      ch.send(runner_error(Status::infra_error,
                           fmt::format("the runner cannot create a CUDA context: {}", cudaGetErrorString(err))));
      return 1;
    }
    protections.merge(confine_self(policy, ConfineStep::syscalls));
  } catch (const std::exception& e) {
    ch.send(runner_error(Status::infra_error, std::string("the runner cannot confine itself: ") + e.what()));
    return 1;
  }
  std::fprintf(stderr, "runner protections: %s\n", nlohmann::json(protections).dump().c_str());
  // Everything the runner says from here on may have been written by the
  // candidate (its constructors run at dlopen): the worker trusts only this
  // line, and blames what follows on the candidate.
  ch.send(event(RunnerEventKind::ready));
  void* so = ::dlopen(artifact.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!so) {
    ch.send(runner_error(Status::launch_error, std::string("cannot load the shared object: ") + ::dlerror()));
    return 0;
  }
  auto launch = reinterpret_cast<LaunchFn>(::dlsym(so, "tessera_launch"));
  auto workspace = reinterpret_cast<WorkspaceFn>(::dlsym(so, "tessera_workspace_bytes"));
  if (!launch) {
    ch.send(runner_error(Status::launch_error, "the shared object does not export tessera_launch"));
    return 0;
  }
  unsigned long long ws = 0;
  try {
    if (workspace) ws = workspace(int(open.m), int(open.n), int(open.k));
  } catch (...) {
    ch.send(runner_error(Status::launch_error, "tessera_workspace_bytes threw"));
    return 0;
  }
  RunnerEvent opened = event(RunnerEventKind::opened);
  opened.workspace_bytes = ws;
  ch.send(opened);
  while (std::getline(std::cin, line)) {
    RunnerCommand cmd;
    std::string bytes;
    try {
      cmd = read_strict<RunnerCommand>(nlohmann::json::parse(line), "runner command");
      if (cmd.op == RunnerOp::quit) return 0;
      bytes = from_hex(cmd.params);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "runner: bad command: %s\n", e.what());
      return 1;
    }
    if (bytes.size() != sizeof(TesseraGemmParams)) return 1;
    TesseraGemmParams p;
    std::memcpy(&p, bytes.data(), sizeof p);
    ch.send(capture(launch, p, cmd.id));
  }
  return 0;
}

}  // namespace tessera::worker
