#pragma once
// The harness's end of one sandbox worker process (`tessera __worker`).
// JSON lines in both directions; every wait is bounded: a worker that stops
// sending heartbeats is killed and reported, never waited on forever.
#include <filesystem>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

namespace tessera::detail {

struct WorkerReply {
  enum class Kind { answer, died, timed_out, fatal } kind = Kind::died;
  nlohmann::json body;  // the answering event
  std::string reason;   // for died / timed_out / fatal
  std::string last_phase;
  int exit_signal = 0;  // died: the signal that ended the worker, or 0
  int exit_code = -1;   // died: its exit code when it exited by itself
};

class WorkerClient {
public:
  WorkerClient(const std::filesystem::path& exe, int device, const std::filesystem::path& log_path,
               bool remeasure_baselines, int autotune_max_algos);
  ~WorkerClient();
  WorkerClient(const WorkerClient&) = delete;
  WorkerClient& operator=(const WorkerClient&) = delete;

  // Waits for the "ready" event.
  WorkerReply start(double timeout_s);
  // Sends one request and waits for an event named `answer_event`, resetting
  // the deadline on every heartbeat.
  WorkerReply call(const nlohmann::json& request, const std::string& answer_event, double silence_timeout_s);
  bool running();
  void kill() noexcept;
  std::string log_tail(std::size_t bytes) const;
  int pid() const;

private:
  WorkerReply wait_for(const std::string& answer_event, double silence_timeout_s);
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tessera::detail
