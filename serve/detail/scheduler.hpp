#pragma once
// Deadlines and periodic sweeps on one thread of their own, so a deadline
// fires even while every other thread waits on an evaluation.
#include <chrono>
#include <functional>
#include <memory>
#include <thread>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>

namespace tessera::serve::detail {

class Scheduler {
public:
  Scheduler();
  ~Scheduler();  // cancels what has not fired
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  // Runs `fn` on the scheduler's thread after `delay`. cancel() stops a
  // timer that has not fired; dropping the handle does not.
  class Handle {
  public:
    virtual ~Handle() = default;
    virtual void cancel() = 0;
  };
  std::shared_ptr<Handle> after(std::chrono::steady_clock::duration delay, std::function<void()> fn);
  // Runs `fn` every `period` until the scheduler is destroyed.
  void every(std::chrono::steady_clock::duration period, std::function<void()> fn);

private:
  boost::asio::io_context io_;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work_;
  std::thread thread_;
};

}  // namespace tessera::serve::detail
