#pragma once
// The live sessions (one RL episode each) by id, with an idle time to live.
// A session runs one step at a time; a second concurrent step is refused.
#include <atomic>
#include <chrono>
#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <string>

#include "serve/backend.hpp"

namespace tessera::serve::detail {

class Session {
public:
  Session(std::string id, std::unique_ptr<Episode> episode) : id_(std::move(id)), episode_(std::move(episode)) {}
  const std::string& id() const { return id_; }
  Episode& episode() { return *episode_; }
  // False while another step runs.
  bool try_begin_step() { return !busy_.exchange(true); }
  void end_step() { busy_ = false; }
  bool busy() const { return busy_; }

private:
  std::string id_;
  std::unique_ptr<Episode> episode_;
  std::atomic<bool> busy_{false};
};

class SessionTable {
public:
  SessionTable(double ttl_s, std::size_t max_sessions);
  // Null when the table is full.
  std::shared_ptr<Session> add(std::unique_ptr<Episode> episode);
  // Null when unknown or expired; a hit renews the time to live.
  std::shared_ptr<Session> find(const std::string& id);
  bool erase(const std::string& id);
  // Drops sessions idle for longer than the time to live (never one mid-step).
  std::size_t sweep();
  std::size_t size() const;
  double ttl_s() const { return ttl_.count(); }

private:
  using Clock = std::chrono::steady_clock;
  struct Slot {
    std::shared_ptr<Session> session;
    Clock::time_point last_used;
  };
  std::string new_id();  // guarded by mu_
  bool expired(const Slot& s, Clock::time_point now) const;

  std::chrono::duration<double> ttl_;
  std::size_t max_;
  mutable std::mutex mu_;
  std::map<std::string, Slot> slots_;
  std::mt19937_64 rng_;
};

}  // namespace tessera::serve::detail
