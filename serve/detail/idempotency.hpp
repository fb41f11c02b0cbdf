#pragma once
// Idempotency keys: the first request with a key does the work; a repeat
// while it runs waits for the same answer; a repeat after it finished gets
// the stored answer. Nothing is ever evaluated twice for one key. A key sent
// again with a different request is a client bug (422).
#include <chrono>
#include <cstddef>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "serve/http.hpp"

namespace tessera::serve::detail {

class IdempotencyStore {
public:
  IdempotencyStore(double ttl_s, std::size_t max_entries);

  enum class Begin {
    first,     // do the work, then finish(); `waiter` is answered by finish()
    attached,  // the same request is running: `waiter` is answered by its finish()
    replayed,  // `waiter` was answered with the stored response
    conflict,  // the key belongs to a different request: `waiter` was not called
  };
  // `fingerprint` identifies the request (method, path, body).
  Begin begin(const std::string& key, const std::string& fingerprint, Reply waiter);
  // The work for `key` ended: every waiter gets `response`. `keep`: a final
  // answer, replayed until the key expires; otherwise (the work never ran,
  // e.g. it expired in the queue) the key is forgotten so a retry runs it.
  void finish(const std::string& key, const HttpResponse& response, bool keep);
  void sweep();  // forgets finished entries past their time to live
  std::size_t size() const;

private:
  using Clock = std::chrono::steady_clock;
  struct Entry {
    std::string fingerprint;
    bool done = false;
    HttpResponse response;
    std::vector<Reply> waiters;
    Clock::time_point expires;
  };
  void evict_if_full();  // guarded by mu_

  std::chrono::duration<double> ttl_;
  std::size_t max_entries_;
  mutable std::mutex mu_;
  std::map<std::string, Entry> entries_;
  std::deque<std::pair<Clock::time_point, std::string>> finished_order_;  // oldest first
};

}  // namespace tessera::serve::detail
