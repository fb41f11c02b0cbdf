#pragma once
// The bounded queue in front of the evaluators: a request is admitted with
// all of its evaluations or not at all (then 429 with Retry-After), and its
// ticket gives them back when they finish.
#include <atomic>
#include <cstddef>
#include <memory>
#include <mutex>

namespace tessera::serve::detail {

class Admission : public std::enable_shared_from_this<Admission> {
public:
  explicit Admission(std::size_t capacity) : capacity_(capacity) {}

  // Gives the evaluations back when the last copy is destroyed.
  class Ticket {
  public:
    Ticket(std::shared_ptr<Admission> owner, std::size_t n) : owner_(std::move(owner)), n_(n) {}
    ~Ticket();
    Ticket(const Ticket&) = delete;
    Ticket& operator=(const Ticket&) = delete;

  private:
    std::shared_ptr<Admission> owner_;
    std::size_t n_;
  };

  // Null when `n` more evaluations do not fit.
  std::shared_ptr<Ticket> try_admit(std::size_t n);
  std::size_t outstanding() const;
  std::size_t capacity() const { return capacity_; }

private:
  void give_back(std::size_t n);

  const std::size_t capacity_;
  mutable std::mutex mu_;
  std::size_t outstanding_ = 0;
};

}  // namespace tessera::serve::detail
