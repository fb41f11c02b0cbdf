#pragma once
// Process-wide CUPTI activity tracing of kernels, copies and sets: the source
// of kernel GPU times. One per process because CUPTI's buffer callbacks are
// global.
#include <cstdint>
#include <string>
#include <vector>

namespace tessera::worker::detail {

struct ActivityRecord {
  std::uint64_t start = 0, end = 0;  // ns, GPU timestamps
  enum class Who { flush, probe, harness, other } who = Who::other;
};

class ActivityTrace {
public:
  static ActivityTrace& instance();
  bool available() const { return available_; }
  const std::string& unavailable_reason() const { return reason_; }
  // Flushes CUPTI's buffers and returns (and forgets) every record so far.
  std::vector<ActivityRecord> drain();

private:
  ActivityTrace();
  bool available_ = false;
  std::string reason_;
};

}  // namespace tessera::worker::detail
