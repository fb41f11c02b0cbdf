#pragma once
// The environment as a service (docs/serve.md): sessions (one RL episode
// each), stateless evaluations (single and batch), OpenRLHF's remote reward
// (POST /get_reward), /healthz and /metrics. Transport-free: the HTTP
// server (server.hpp) hands it requests and takes its replies.
//
// Every request ends with a result or a typed error: a bounded queue answers
// 429 with Retry-After when full, every request has a deadline (504 when it
// passes), an Idempotency-Key makes a repeated request replay the first one
// instead of evaluating again, and once draining (SIGTERM) new requests get
// 503 while the ones in flight finish.
#include <chrono>
#include <cstddef>
#include <memory>
#include <string>

#include "serve/backend.hpp"
#include "serve/http.hpp"
#include "serve/options.hpp"

namespace tessera::serve {

namespace detail {
struct Context;
}

class Service {
public:
  Service(ServeOptions options, Backend backend);
  // Waits for the work in flight (evaluations end on their own limits).
  ~Service();
  Service(const Service&) = delete;
  Service& operator=(const Service&) = delete;

  // Thread-safe; never throws; never waits for an evaluation: `reply` is
  // called exactly once, now or later, from any thread.
  void handle(HttpRequest request, Reply reply);

  // From now on new requests get 503; the ones in flight go on.
  void begin_drain();
  bool draining() const;
  std::size_t in_flight() const;
  // True when nothing is in flight any more; false when `timeout` passed first.
  bool wait_drained(std::chrono::duration<double> timeout) const;

  std::string metrics_text() const;

private:
  std::unique_ptr<detail::Context> ctx_;
};

}  // namespace tessera::serve
