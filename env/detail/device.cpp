#include "env/detail/device.hpp"

#include <future>
#include <map>
#include <mutex>

namespace tessera::env::detail {

namespace {

// Keyed by the pool's control block: an entry can never be mistaken for a
// later pool at the same address.
using Known = std::map<std::weak_ptr<EvaluatorPool>, DeviceSummary, std::owner_less<std::weak_ptr<EvaluatorPool>>>;

bool reported(const DeviceSummary& d) { return !d.name.empty() || !d.arch.empty(); }

}  // namespace

DeviceSummary pool_device(const std::shared_ptr<EvaluatorPool>& pool) {
  static std::mutex mu;
  static Known known;
  {
    std::lock_guard g(mu);
    if (auto it = known.find(pool); it != known.end()) return it->second;
  }
  auto promise = std::make_shared<std::promise<DeviceSummary>>();
  auto future = promise->get_future();
  pool->submit_to(0, [promise](Evaluator& ev, std::size_t) {
    try {
      ev.start();
      promise->set_value(ev.device());
    } catch (...) {
      promise->set_value(DeviceSummary{});  // a worker that cannot start: evaluations will say why
    }
  });
  const DeviceSummary d = future.get();
  if (reported(d)) {
    std::lock_guard g(mu);
    known[pool] = d;
  }
  return d;
}

}  // namespace tessera::env::detail
