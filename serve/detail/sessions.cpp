#include "serve/detail/sessions.hpp"

#include <fmt/format.h>

namespace tessera::serve::detail {

SessionTable::SessionTable(double ttl_s, std::size_t max_sessions)
    : ttl_(ttl_s), max_(max_sessions), rng_(std::random_device{}()) {}

std::string SessionTable::new_id() {
  // 128 random bits: ids are not guessable from each other.
  return fmt::format("{:016x}{:016x}", rng_(), rng_());
}

bool SessionTable::expired(const Slot& s, Clock::time_point now) const {
  return !s.session->busy() && now - s.last_used > ttl_;
}

std::shared_ptr<Session> SessionTable::add(std::unique_ptr<Episode> episode) {
  std::lock_guard g(mu_);
  if (slots_.size() >= max_) return nullptr;
  std::string id = new_id();
  auto s = std::make_shared<Session>(id, std::move(episode));
  slots_[id] = Slot{s, Clock::now()};
  return s;
}

std::shared_ptr<Session> SessionTable::find(const std::string& id) {
  std::lock_guard g(mu_);
  auto it = slots_.find(id);
  if (it == slots_.end()) return nullptr;
  const auto now = Clock::now();
  if (expired(it->second, now)) {
    slots_.erase(it);
    return nullptr;
  }
  it->second.last_used = now;
  return it->second.session;
}

bool SessionTable::erase(const std::string& id) {
  std::lock_guard g(mu_);
  return slots_.erase(id) > 0;
}

std::size_t SessionTable::sweep() {
  std::lock_guard g(mu_);
  const auto now = Clock::now();
  std::size_t dropped = 0;
  for (auto it = slots_.begin(); it != slots_.end();) {
    if (expired(it->second, now)) {
      it = slots_.erase(it);
      ++dropped;
    } else {
      ++it;
    }
  }
  return dropped;
}

std::size_t SessionTable::size() const {
  std::lock_guard g(mu_);
  return slots_.size();
}

}  // namespace tessera::serve::detail
