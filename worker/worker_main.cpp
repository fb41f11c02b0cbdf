#include <cuda_runtime_api.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <iostream>
#include <string>

#include <nlohmann/json.hpp>

#include "confine/confine.hpp"
#include "core/error.hpp"
#include "core/fs.hpp"
#include "core/wire.hpp"
#include "worker/channel.hpp"
#include "worker/worker_session.hpp"

namespace tessera::worker {

namespace {

// Once the CUDA context exists and before any candidate loads: the worker
// policy (confine/confine.hpp). The working directory is the private scratch
// directory the harness created for this worker; the autotune cache is the
// one other place it writes.
ProtectionReport confine_worker() {
  std::vector<std::filesystem::path> writable;
  std::error_code ec;
  const auto autotune = cache_dir() / "baselines";
  if (std::filesystem::create_directories(autotune, ec); !ec) writable.push_back(autotune);
  ProtectionReport r = confine_self(worker_policy(std::filesystem::current_path(), writable));
  int devices = 0;
  r.gpu_isolated = cudaGetDeviceCount(&devices) == cudaSuccess && devices == 1;
  std::fprintf(stderr, "worker protections: %s\n", nlohmann::json(r).dump().c_str());
  return r;
}

// Answers one request line; false when the worker is to exit (quit, or a
// candidate poisoned the CUDA context: a fresh worker takes over).
bool answer(Channel& ch, WorkerSession& session, const nlohmann::json& req, WorkerOp op) {
  if (op != WorkerOp::eval) (void)read_strict<WorkerCommand>(req, "worker request");
  const auto beat = [&](const std::string& phase) { ch.send({{"event", "heartbeat"}, {"phase", phase}}); };
  switch (op) {
    case WorkerOp::quit:
      return false;
    case WorkerOp::hello:
      ch.send({{"event", "hello"}, {"device", session.hello()}});
      return true;
    case WorkerOp::ceiling:
      beat("ceiling");
      ch.send({{"event", "ceiling"}, {"ceiling", session.ceiling(beat)}});
      return true;
    case WorkerOp::eval:
      break;
  }
  const EvalResult result = session.evaluate(read_strict<WorkerEvalRequest>(req, "eval request"), beat);
  ch.send({{"event", "result"}, {"result", result}, {"healthy", session.healthy()}});
  return session.healthy();
}

}  // namespace

int worker_main(const WorkerConfig& config) {
  Channel ch;
  std::unique_ptr<WorkerSession> session;
  try {
    session = std::make_unique<WorkerSession>(config);
  } catch (const std::exception& e) {
    ch.send({{"event", "fatal"}, {"reason", std::string("cannot start on the GPU: ") + e.what()}});
    return 1;
  }
  ProtectionReport protections;
  try {
    protections = confine_worker();
  } catch (const std::exception& e) {
    ch.send({{"event", "fatal"}, {"reason", std::string("cannot confine the worker: ") + e.what()}});
    return 1;
  }
  ch.send({{"event", "ready"}, {"protections", protections}});
  std::string line;
  while (std::getline(std::cin, line)) {
    nlohmann::json req;
    WorkerOp op = WorkerOp::quit;
    try {
      req = nlohmann::json::parse(line);
      op = worker_op_of(req);
    } catch (const std::exception& e) {
      ch.send({{"event", "fatal"}, {"reason", std::string("bad request: ") + e.what()}});
      return 1;
    }
    try {
      if (!answer(ch, *session, req, op)) return 0;
    } catch (const std::exception& e) {
      ch.send({{"event", "fatal"}, {"reason", std::string("worker error: ") + e.what()}});
      return 1;
    }
  }
  return 0;
}

}  // namespace tessera::worker
