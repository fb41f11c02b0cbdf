// Adversarial corpus -- result caching across calls, recomputing only what changed, device-only.
// Tries: the strongest cache. It keeps its last result and, for every row of
// A and of B (one row of B per output column), the raw bits of its first
// KEY elements. A launch compares the keys, recomputes only the outputs in
// a changed row or column -- spread over every thread of the grid -- and
// copies the stored value everywhere else. Its answer is exact on every
// launch: a harness that refreshes about one row in eight of A and of B
// between timed calls leaves three outputs in four unchanged, and this
// kernel recomputes about a quarter of the GEMM.
// Expected: ok (its output is right), and the paid time shows the gap:
// compare its cold time in the table with reuse_finite_tile.cu (the same
// dot products, all of them). Closing it needs timed calls whose inputs are
// entirely new (or changed in a way no output survives), not partly new.
#include "tessera_abi.cuh"
#define MAX_DIM 256
#define KEY 4
extern "C" __device__ const TesseraLaunchContract tessera_contract = {
    TESSERA_ABI_VERSION, 256, 16, 16, 1, 0, 0, 1, 1, TESSERA_EPILOGUE_NONE, 0, 0, 0, 0, 0, 0, 0, 0, 0};
__device__ __half g_stash[MAX_DIM * MAX_DIM];
__device__ unsigned short g_key_a[MAX_DIM][KEY], g_key_b[MAX_DIM][KEY];
__device__ bool g_valid;
__device__ unsigned long long g_done;

__device__ float dot(const TesseraGemmParams& p, int i, int j) {
  float acc = 0.f;
  for (int k = 0; k < p.K; ++k) acc += __half2float(p.A[(size_t)i * p.K + k]) * __half2float(p.B[(size_t)j * p.K + k]);
  return acc;
}

__device__ bool changed(const __half* row, const unsigned short key[KEY], int K) {
  for (int k = 0; k < KEY && k < K; ++k)
    if (__half_as_ushort(row[k]) != key[k]) return true;
  return false;
}

extern "C" __global__ void tessera_hgemm(const __grid_constant__ TesseraGemmParams p) {
  const int t = threadIdx.x, row = blockIdx.y * 16 + t / 16, col = blockIdx.x * 16 + t % 16;
  if (p.M > MAX_DIM || p.N > MAX_DIM) {  // too large to keep: honest
    if (row < p.M && col < p.N) p.C[(size_t)row * p.N + col] = __float2half_rn(dot(p, row, col));
    return;
  }
  __shared__ bool row_new[MAX_DIM], col_new[MAX_DIM], last;
  __shared__ short new_rows[MAX_DIM], kept_rows[MAX_DIM], new_cols[MAX_DIM];
  __shared__ int n_new_rows, n_kept_rows, n_new_cols;
  if (t < p.M) row_new[t] = !g_valid || changed(p.A + (size_t)t * p.K, g_key_a[t], p.K);  // 256 threads: a row and
  if (t < p.N) col_new[t] = !g_valid || changed(p.B + (size_t)t * p.K, g_key_b[t], p.K);  // a column each
  __syncthreads();
  if (t == 0) {
    n_new_rows = n_kept_rows = n_new_cols = 0;
    for (int i = 0; i < p.M; ++i) (row_new[i] ? new_rows[n_new_rows++] : kept_rows[n_kept_rows++]) = i;
    for (int j = 0; j < p.N; ++j)
      if (col_new[j]) new_cols[n_new_cols++] = j;
  }
  __syncthreads();
  // Outputs in a changed row or column: one per thread of the grid.
  const long long item = (long long)(blockIdx.y * gridDim.x + blockIdx.x) * blockDim.x + t;
  const long long in_new_rows = (long long)n_new_rows * p.N;
  if (item < in_new_rows + (long long)n_kept_rows * n_new_cols) {
    const long long rest = item - in_new_rows;
    const int i = item < in_new_rows ? new_rows[item / p.N] : kept_rows[rest / n_new_cols];
    const int j = item < in_new_rows ? int(item % p.N) : new_cols[rest % n_new_cols];
    const __half out = __float2half_rn(dot(p, i, j));
    p.C[(size_t)i * p.N + j] = out;
    g_stash[i * p.N + j] = out;
  }
  // Every other output: the stored one.
  if (row < p.M && col < p.N && !row_new[row] && !col_new[col]) p.C[(size_t)row * p.N + col] = g_stash[row * p.N + col];
  __syncthreads();
  if (t == 0) {
    __threadfence();
    last = (atomicAdd(&g_done, 1ull) + 1) % (gridDim.x * gridDim.y) == 0;
  }
  __syncthreads();
  if (!last) return;  // the last CTA to finish records this launch's keys
  for (int k = 0; k < KEY && k < p.K; ++k) {
    if (t < p.M) g_key_a[t][k] = __half_as_ushort(p.A[(size_t)t * p.K + k]);
    if (t < p.N) g_key_b[t][k] = __half_as_ushort(p.B[(size_t)t * p.K + k]);
  }
  if (t == 0) g_valid = true;
}
