#pragma once
// Reads every GPU of a point through NVML every period on a thread of its
// own while the point's evaluations run, and summarises the readings per GPU
// (bench/scale_report.hpp, GpuFigures): whether the clocks held, what power
// and temperature did, and which throttle reasons were set. Without NVML
// (no driver: CI) it takes no readings and says why; nothing fails.
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "harness/nvml.hpp"
#include "bench/scale_report.hpp"

namespace tessera::bench::detail {

inline constexpr double kDefaultSamplePeriodSeconds = 0.25;

class GpuSampler {
public:
  // Starts sampling the CUDA devices `devices` at once.
  GpuSampler(std::vector<int> devices, double period_s = kDefaultSamplePeriodSeconds,
             const std::string& library = kNvmlLibrary);
  // Stops and joins the thread (finish() need not have been called).
  ~GpuSampler();
  GpuSampler(const GpuSampler&) = delete;
  GpuSampler& operator=(const GpuSampler&) = delete;

  // "" when NVML answers, else why there are no readings ("NVML unavailable: ...").
  const std::string& problem() const { return nvml_.problem(); }
  // Stops sampling; one summary per device, in the order given (busy unset).
  std::vector<GpuFigures> finish();

private:
  struct Tracked {
    int device;
    void* handle;  // nullptr: not sampled, `problem` says why
    std::string name, problem;
    std::vector<NvmlReading> readings;
  };
  void loop();
  void stop();

  Nvml nvml_;
  std::chrono::duration<double> period_;
  std::vector<Tracked> tracked_;  // readings written by the thread, read after it stopped
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  std::thread thread_;  // declared last: started last, joined first
};

// The summary of one GPU's readings (exposed for tests).
GpuFigures summarise(int device, const std::string& name, const std::vector<NvmlReading>& readings);

}  // namespace tessera::bench::detail
