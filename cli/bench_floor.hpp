#pragma once
// `tessera bench floor` (bench_floor.cpp).
namespace tessera::cli {

struct BenchFloorArgs {
  int device = 0;
  bool json = false;
};

void run_bench_floor(const BenchFloorArgs& a);

}  // namespace tessera::cli
