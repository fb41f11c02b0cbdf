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
    try {
      req = nlohmann::json::parse(line);
    } catch (const std::exception& e) {
      ch.send({{"event", "fatal"}, {"reason", std::string("bad request: ") + e.what()}});
      return 1;
    }
    const std::string op = req.value("op", "");
    try {
      if (op == "quit") return 0;
      if (op == "hello") {
        ch.send({{"event", "hello"}, {"device", session->hello()}});
      } else if (op == "ceiling") {
        ch.send({{"event", "heartbeat"}, {"phase", "ceiling"}});
        ch.send({{"event", "ceiling"}, {"ceiling", session->ceiling()}});
      } else if (op == "eval") {
        auto result = session->evaluate(req, [&](const std::string& phase) {
          ch.send({{"event", "heartbeat"}, {"phase", phase}});
        });
        ch.send({{"event", "result"}, {"result", result}, {"healthy", session->healthy()}});
        if (!session->healthy()) return 0;  // the context is poisoned: a fresh worker takes over
      } else {
        ch.send({{"event", "fatal"}, {"reason", "unknown op '" + op + "'"}});
        return 1;
      }
    } catch (const std::exception& e) {
      ch.send({{"event", "fatal"}, {"reason", std::string("worker error: ") + e.what()}});
      return 1;
    }
  }
  return 0;
}

}  // namespace tessera::worker
