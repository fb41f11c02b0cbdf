#include "bench/baseline.hpp"

#include "bench/device.hpp"

namespace tessera::bench {

BaselineRun measure_baselines_here(int device, const Task& task, const baselines::MeasureOptions& options) {
  const cudaDeviceProp prop = open_device(device);
  return {prop.name, baselines::measure_baselines(task, options)};
}

}  // namespace tessera::bench
