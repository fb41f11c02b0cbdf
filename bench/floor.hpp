#pragma once
// `tessera bench floor` (bench/floor.cpp).
namespace tessera::bench {

struct BenchFloorArgs {
  int device = 0;
  bool json = false;
};

void run_bench_floor(const BenchFloorArgs& a);

}  // namespace tessera::bench
