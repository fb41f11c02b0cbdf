#pragma once
// `tessera bench protocol` (bench/protocol.cpp): what the integrity guards
// cost a measured time, old protocol against new, in one process.
#include <string>
#include <vector>

namespace tessera::bench {

struct BenchProtocolArgs {
  int device = 0;
  std::vector<std::string> kernels;  // FILE.cu@MxNxK, tile:CONFIG@MxNxK, floor:empty, floor:touch
  int repeat = 3;
  bool json = false;
};

void run_bench_protocol(const BenchProtocolArgs& a);

}  // namespace tessera::bench
