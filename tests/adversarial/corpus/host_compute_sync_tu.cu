// Adversarial corpus -- host-side computation with synchronous copies, translation unit.
// Tries: copies A and B to the host, multiplies them on the CPU and copies C
// back: no kernel at all, so a kernel timer records nothing (the old harness
// saw a call that took seconds and timed it out, but never paid it).
// Caught: host code runs under stream capture; a synchronous copy cannot be
// captured -> launch_error ("captur").
#include <cuda_runtime.h>

#include <vector>

#include "tessera_abi.cuh"

extern "C" int tessera_launch(const TesseraGemmParams* p, cudaStream_t) {
  const size_t m = p->M, n = p->N, k = p->K;
  std::vector<__half> a(m * k), b(n * k), c(m * n);
  cudaMemcpy(a.data(), p->A, a.size() * 2, cudaMemcpyDeviceToHost);  // errors ignored, as sloppy host code does
  cudaMemcpy(b.data(), p->B, b.size() * 2, cudaMemcpyDeviceToHost);
  for (size_t i = 0; i < m; ++i)
    for (size_t j = 0; j < n; ++j) {
      float acc = 0.f;
      for (size_t x = 0; x < k; ++x) acc += __half2float(a[i * k + x]) * __half2float(b[j * k + x]);
      c[i * n + j] = __float2half_rn(acc);
    }
  cudaMemcpy(p->C, c.data(), c.size() * 2, cudaMemcpyHostToDevice);
  return 0;
}
