// Adversarial corpus -- host-side computation in a stream callback, translation unit.
// Tries: everything on the given stream and asynchronous -- so it survives a
// capture: copy A and B into pinned host memory, a host function node that
// multiplies them on the CPU, copy C back. A graph of such nodes replays fine
// and no kernel timer sees the work.
// Caught: the worker replays only kernels and memsets of the unit's own
// device code; a captured copy or host-function node is refused
// -> launch_error ("host").
#include <cuda_runtime.h>
#include "tessera_abi.cuh"

namespace {
constexpr size_t kMaxElems = 1u << 20;  // per matrix
__half *a = nullptr, *b = nullptr, *c = nullptr;
int dims[3];

__attribute__((constructor)) void pin_host_memory() {
  cudaMallocHost(&a, kMaxElems * 2);
  cudaMallocHost(&b, kMaxElems * 2);
  cudaMallocHost(&c, kMaxElems * 2);
}

void CUDART_CB multiply_on_host(void*) {
  const size_t m = dims[0], n = dims[1], k = dims[2];
  for (size_t i = 0; i < m; ++i)
    for (size_t j = 0; j < n; ++j) {
      float acc = 0.f;
      for (size_t x = 0; x < k; ++x) acc += __half2float(a[i * k + x]) * __half2float(b[j * k + x]);
      c[i * n + j] = __float2half_rn(acc);
    }
}
}  // namespace

extern "C" int tessera_launch(const TesseraGemmParams* p, cudaStream_t stream) {
  const size_t m = p->M, n = p->N, k = p->K;
  if (!a || !b || !c || m * k > kMaxElems || n * k > kMaxElems || m * n > kMaxElems) return 1;
  dims[0] = p->M, dims[1] = p->N, dims[2] = p->K;
  cudaMemcpyAsync(a, p->A, m * k * 2, cudaMemcpyDeviceToHost, stream);
  cudaMemcpyAsync(b, p->B, n * k * 2, cudaMemcpyDeviceToHost, stream);
  cudaLaunchHostFunc(stream, multiply_on_host, nullptr);
  cudaMemcpyAsync(p->C, c, m * n * 2, cudaMemcpyHostToDevice, stream);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
