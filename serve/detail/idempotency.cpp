#include "serve/detail/idempotency.hpp"

namespace tessera::serve::detail {

IdempotencyStore::IdempotencyStore(double ttl_s, std::size_t max_entries)
    : ttl_(ttl_s), max_entries_(max_entries) {}

IdempotencyStore::Begin IdempotencyStore::begin(const std::string& key, const std::string& fingerprint,
                                                Reply waiter) {
  HttpResponse stored;
  {
    std::lock_guard g(mu_);
    auto it = entries_.find(key);
    if (it != entries_.end() && it->second.done && Clock::now() >= it->second.expires) {
      entries_.erase(it);
      it = entries_.end();
    }
    if (it == entries_.end()) {
      evict_if_full();
      Entry e;
      e.fingerprint = fingerprint;
      e.waiters.push_back(std::move(waiter));
      entries_.emplace(key, std::move(e));
      return Begin::first;
    }
    if (it->second.fingerprint != fingerprint) return Begin::conflict;
    if (!it->second.done) {
      it->second.waiters.push_back(std::move(waiter));
      return Begin::attached;
    }
    stored = it->second.response;
  }
  stored.headers.emplace_back("Idempotent-Replayed", "true");
  waiter(std::move(stored));
  return Begin::replayed;
}

void IdempotencyStore::finish(const std::string& key, const HttpResponse& response, bool keep) {
  std::vector<Reply> waiters;
  {
    std::lock_guard g(mu_);
    auto it = entries_.find(key);
    if (it == entries_.end()) return;
    waiters = std::move(it->second.waiters);
    if (keep) {
      it->second.done = true;
      it->second.response = response;
      it->second.expires = Clock::now() + std::chrono::duration_cast<Clock::duration>(ttl_);
      it->second.waiters.clear();
      finished_order_.emplace_back(it->second.expires, key);
    } else {
      entries_.erase(it);
    }
  }
  // Outside the lock: a reply may post work that comes back here.
  for (auto& w : waiters) w(response);
}

void IdempotencyStore::sweep() {
  std::lock_guard g(mu_);
  const auto now = Clock::now();
  while (!finished_order_.empty() && finished_order_.front().first <= now) {
    auto it = entries_.find(finished_order_.front().second);
    // The key may have been reused since (expired, then begun again): only
    // a finished entry whose time is up goes.
    if (it != entries_.end() && it->second.done && it->second.expires <= now) entries_.erase(it);
    finished_order_.pop_front();
  }
}

void IdempotencyStore::evict_if_full() {
  while (entries_.size() >= max_entries_ && !finished_order_.empty()) {
    auto it = entries_.find(finished_order_.front().second);
    if (it != entries_.end() && it->second.done) entries_.erase(it);
    finished_order_.pop_front();
  }
}

std::size_t IdempotencyStore::size() const {
  std::lock_guard g(mu_);
  return entries_.size();
}

}  // namespace tessera::serve::detail
