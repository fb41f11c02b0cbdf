#pragma once
// `tessera baseline`: every cuBLAS/cuBLASLt baseline of one task, timed in
// this process (baselines run no candidate code) with the candidates' timer.
#include <string>

#include "core/task.hpp"
#include "worker/baselines/measure.hpp"

namespace tessera::bench {

struct BaselineRun {
  std::string device;  // the GPU's name
  baselines::BaselineMeasurement measurement;
};

// On CUDA device `device` (open_device's errors: no GPU, no such ordinal).
BaselineRun measure_baselines_here(int device, const Task& task, const baselines::MeasureOptions& options);

}  // namespace tessera::bench
