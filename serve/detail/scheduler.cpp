#include "serve/detail/scheduler.hpp"

#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>

namespace tessera::serve::detail {

namespace {
class TimerHandle final : public Scheduler::Handle {
public:
  explicit TimerHandle(boost::asio::io_context& io) : timer(io) {}
  void cancel() override {
    // The timer belongs to the scheduler's thread: cancel it there.
    boost::asio::post(timer.get_executor(), [this, self = keep.lock()] { timer.cancel(); });
  }
  boost::asio::steady_timer timer;
  std::weak_ptr<TimerHandle> keep;
};

void arm_periodic(boost::asio::io_context& io, std::shared_ptr<boost::asio::steady_timer> t,
                  std::chrono::steady_clock::duration period, std::function<void()> fn) {
  t->expires_after(period);
  t->async_wait([&io, t, period, fn = std::move(fn)](const boost::system::error_code& ec) mutable {
    if (ec) return;
    fn();
    arm_periodic(io, t, period, std::move(fn));
  });
}
}  // namespace

Scheduler::Scheduler() : work_(boost::asio::make_work_guard(io_)), thread_([this] { io_.run(); }) {}

Scheduler::~Scheduler() {
  work_.reset();
  io_.stop();
  thread_.join();
}

std::shared_ptr<Scheduler::Handle> Scheduler::after(std::chrono::steady_clock::duration delay,
                                                    std::function<void()> fn) {
  auto h = std::make_shared<TimerHandle>(io_);
  h->keep = h;
  h->timer.expires_after(delay);
  h->timer.async_wait([h, fn = std::move(fn)](const boost::system::error_code& ec) {
    if (!ec) fn();
  });
  return h;
}

void Scheduler::every(std::chrono::steady_clock::duration period, std::function<void()> fn) {
  boost::asio::post(io_, [this, period, fn = std::move(fn)]() mutable {
    arm_periodic(io_, std::make_shared<boost::asio::steady_timer>(io_), period, std::move(fn));
  });
}

}  // namespace tessera::serve::detail
