#pragma once
// What `tessera serve` is configured with (docs/serve.md). Every default is a
// named constant with its unit. How actions are judged (action space,
// reward, evaluation options, retries) is the backend's EnvConfig.
#include <cstddef>
#include <optional>
#include <string>

#include "core/task.hpp"

namespace tessera::serve {

inline constexpr const char* kDefaultHost = "127.0.0.1";
inline constexpr int kDefaultPort = 8177;
inline constexpr int kDefaultIoThreads = 2;                 // HTTP parsing and routing only; no evaluation runs there
// Evaluations admitted and not yet finished (queued + running), over every
// endpoint; one more is answered 429 with Retry-After.
inline constexpr std::size_t kDefaultQueueCapacity = 256;
inline constexpr std::size_t kDefaultMaxBatch = 64;        // items per /v1/evaluate/batch or /get_reward call
inline constexpr std::size_t kDefaultMaxBodyBytes = 8u << 20;  // bytes of one request body
inline constexpr std::size_t kMaxHeaderBytes = 16u << 10;      // bytes of one request's header block
inline constexpr double kDefaultDeadlineSeconds = 600;     // a request without X-Tessera-Deadline
inline constexpr double kMaxDeadlineSeconds = 3600;        // the most a client may ask for
inline constexpr double kDefaultSessionTtlSeconds = 900;   // idle time before a session is dropped
inline constexpr std::size_t kDefaultMaxSessions = 4096;
inline constexpr double kDefaultIdempotencyTtlSeconds = 3600;  // how long a finished answer is replayed
inline constexpr std::size_t kDefaultIdempotencyEntries = 100000;
inline constexpr int kDefaultRetryAfterSeconds = 1;        // Retry-After of a 429 (whole seconds, as HTTP says)
inline constexpr double kDefaultReadTimeoutSeconds = 30;   // to receive one whole request (slow clients are cut off)
inline constexpr double kDefaultDrainSeconds = 900;        // SIGTERM: the longest wait for in-flight requests
inline constexpr double kDefaultMaskedReward = 0.0;        // get_reward's number for a masked item (no null there)

struct ServeOptions {
  std::string host = kDefaultHost;
  int port = kDefaultPort;  // 0: any free port (tests)
  int io_threads = kDefaultIoThreads;
  int compile_threads = 0;  // 0: one per CPU core
  std::size_t queue_capacity = kDefaultQueueCapacity;
  std::size_t max_batch = kDefaultMaxBatch;
  std::size_t max_body_bytes = kDefaultMaxBodyBytes;
  double default_deadline_s = kDefaultDeadlineSeconds;
  double max_deadline_s = kMaxDeadlineSeconds;
  double session_ttl_s = kDefaultSessionTtlSeconds;
  std::size_t max_sessions = kDefaultMaxSessions;
  double idempotency_ttl_s = kDefaultIdempotencyTtlSeconds;
  std::size_t idempotency_entries = kDefaultIdempotencyEntries;
  int retry_after_s = kDefaultRetryAfterSeconds;
  double read_timeout_s = kDefaultReadTimeoutSeconds;
  double drain_s = kDefaultDrainSeconds;
  // Bearer token every /v1 call must carry; empty: no authentication (bind
  // to loopback then).
  std::string token;
  // OpenRLHF's remote-reward client sends no headers: exempt /get_reward.
  bool open_reward = false;
  // POST /v1/admin/kill_worker (tests and drills): a worker dies mid-load.
  bool fault_injection = false;
  double masked_reward = kDefaultMaskedReward;
  // The task of a /get_reward item without a label, and of a session
  // created without one when the environment has no task list.
  std::optional<Task> default_task;
};

}  // namespace tessera::serve
