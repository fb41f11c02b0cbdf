#pragma once
// Everything the sandbox worker process does for one evaluation request:
// load, verify, time (interleaved with the baselines), count. Lives only in
// the worker; the harness talks to it through JSON lines (harness/sandbox.cpp).
#include <functional>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "core/result.hpp"
#include "core/wire.hpp"

namespace tessera::worker {

// The worker's command line (harness/child_roles.cpp), from SandboxOptions.
struct WorkerConfig {
  int device = 0;
  bool remeasure_baselines = false;
  int autotune_max_algos = kDefaultAutotuneMaxAlgos;
};

class WorkerSession {
public:
  explicit WorkerSession(WorkerConfig config);
  ~WorkerSession();
  WorkerSession(const WorkerSession&) = delete;
  WorkerSession& operator=(const WorkerSession&) = delete;

  DeviceSummary hello() const;
  // Measures the device's ceiling (ceiling_probe.hpp): tens of seconds, once
  // the GPU is this process's (gpu_lock.hpp; heartbeats while it waits).
  DeviceCeiling ceiling(const std::function<void(const std::string&)>& heartbeat);
  // Never throws for a candidate's failure. Holds the GPU's machine-wide
  // lock throughout; a wait for it is phase_ms["gpu_wait"].
  EvalResult evaluate(const WorkerEvalRequest& request, const std::function<void(const std::string&)>& heartbeat);
  // False once a candidate poisoned the CUDA context: the worker must exit.
  bool healthy() const { return healthy_; }

private:
  EvalResult run_eval(const WorkerEvalRequest& request, const std::function<void(const std::string&)>& heartbeat);
  void taint_if_it_wrote_outside(const EvalResult& r);
  struct State;
  std::unique_ptr<State> state_;
  WorkerConfig config_;
  bool healthy_ = true;
};

// The `tessera __worker` process: WorkerCommand and WorkerEvalRequest lines
// (core/wire.hpp) on stdin, answers on the original stdout (fd 1 is
// redirected to stderr so candidate printf cannot corrupt the protocol).
int worker_main(const WorkerConfig& config);

}  // namespace tessera::worker
