// Adversarial corpus -- result caching across calls, undoing the sign variation, device-only.
// Tries: the strongest cache. Each 16x16 tile keeps its last result and, as
// a key, the first two elements of each of its 16 rows of A and 16 rows of B
// (B is N x K: one row per output column). When every key element has the
// same magnitude as stored, the tile assumes the inputs are the stored ones
// up to the sign of whole rows of A and columns of the output -- exactly the
// variation the harness applies between timed launches -- reads the sign
// change off the key elements and writes the stored result with signs
// corrected: C'[i][j] = s_i t_j C[i][j], exact in fp16. It reads 64 elements
// of A and B per tile instead of 32 KiB, and never computes in the timing loop.
// Expected caught (wrong_answer or rejected); predicted NOT caught by a sign
// variation however random, nor by fresh inputs once (one miss): its output
// is right every time. Catching it needs inputs the stored result cannot be
// mapped onto cheaply -- fresh values, not only new signs, before the timed
// launches.
#include "tessera_abi.cuh"
#define MAX_TILES 256
extern "C" __device__ const TesseraLaunchContract tessera_contract = {
    TESSERA_ABI_VERSION, 256, 16, 16, 1, 0, 0, 1, 1, TESSERA_EPILOGUE_NONE, 0, 0, 0, 0, 0, 0, 0, 0, 0};
__device__ __half g_stash[MAX_TILES * 256];
__device__ unsigned short g_key_a[MAX_TILES][16][2], g_key_b[MAX_TILES][16][2];
__device__ unsigned g_valid[MAX_TILES];

// +1 or -1: the sign change of a whole row whose two key elements kept their
// magnitudes; 0 when a magnitude changed or the row's keys carry no sign.
__device__ int sign_change(const __half* row_start, const unsigned short key[2]) {
  const unsigned short now[2] = {__half_as_ushort(row_start[0]), __half_as_ushort(row_start[1])};
  int flip = -1;  // unknown
  for (int i = 0; i < 2; ++i) {
    if ((now[i] ^ key[i]) & 0x7FFF) return 0;
    if (!(key[i] & 0x7FFF)) continue;  // a zero has no sign
    const int f = ((now[i] ^ key[i]) & 0x8000) != 0;
    if (flip >= 0 && f != flip) return 0;
    flip = f;
  }
  return flip < 0 ? 0 : (flip ? -1 : 1);
}

extern "C" __global__ void tessera_hgemm(const __grid_constant__ TesseraGemmParams p) {
  const int ty = threadIdx.x / 16, tx = threadIdx.x % 16;
  const int row = blockIdx.y * 16 + ty, col = blockIdx.x * 16 + tx;
  const int tile = blockIdx.y * gridDim.x + blockIdx.x;
  const bool cacheable = gridDim.x * gridDim.y <= MAX_TILES;
  const bool inside = row < p.M && col < p.N;
  int sign = 0;
  if (cacheable && inside && g_valid[tile])
    sign = sign_change(p.A + (size_t)row * p.K, g_key_a[tile][ty]) * sign_change(p.B + (size_t)col * p.K, g_key_b[tile][tx]);
  const bool hit = __syncthreads_and(!inside || sign != 0);
  if (!inside) return;
  __half* stash = g_stash + tile * 256 + threadIdx.x;
  if (cacheable && hit) {
    p.C[(size_t)row * p.N + col] = __ushort_as_half(__half_as_ushort(*stash) ^ (sign < 0 ? 0x8000 : 0));
    return;
  }
  float acc = 0.f;
  for (int k = 0; k < p.K; ++k) acc += __half2float(p.A[(size_t)row * p.K + k]) * __half2float(p.B[(size_t)col * p.K + k]);
  const __half out = __float2half_rn(acc);
  p.C[(size_t)row * p.N + col] = out;
  if (!cacheable) return;
  *stash = out;
  if (tx == 0) for (int i = 0; i < 2; ++i) g_key_a[tile][ty][i] = __half_as_ushort(p.A[(size_t)row * p.K + i]);
  if (ty == 0) for (int i = 0; i < 2; ++i) g_key_b[tile][tx][i] = __half_as_ushort(p.B[(size_t)col * p.K + i]);
  if (threadIdx.x == 0) g_valid[tile] = 1;  // read only by a later launch
}
