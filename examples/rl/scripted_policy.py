"""A scripted policy: three replies a model could send over a 3-turn episode.

Turn 1 is the repository's naive kernel (one thread per output element, B read
along K by every thread: uncoalesced). Turn 2 is a SEARCH/REPLACE diff of it
that stages 16x16 tiles of A and B in shared memory, so global loads are
coalesced and each value is read from DRAM once per tile. Turn 3 hands the
problem to tessera's tile compiler with a configuration (wgmma + TMA).
"""

from __future__ import annotations

from pathlib import Path

TASK = "1024x1024x1024"
NAIVE = (Path(__file__).resolve().parents[1] / "hgemm_naive.cu").read_text()

TURN_1 = f"A first, simple kernel to get a correct baseline:\n\n```cuda\n{NAIVE}```\n"

TURN_2 = """Every thread reads a row of B along K on its own, so the loads are uncoalesced. Stage tiles in shared memory:

<<<<<<< SEARCH
  const int row = blockIdx.y * TILE + threadIdx.x / TILE;
  const int col = blockIdx.x * TILE + threadIdx.x % TILE;
  if (row >= p.M || col >= p.N) return;
  float acc = 0.0f;
  for (int k = 0; k < p.K; ++k)
    acc += __half2float(p.A[(size_t)row * p.lda + k]) * __half2float(p.B[(size_t)col * p.ldb + k]);
  p.C[(size_t)row * p.ldc + col] = __float2half_rn(acc);
=======
  __shared__ float As[TILE][TILE + 1];  // +1: no bank conflicts on the column reads
  __shared__ float Bs[TILE][TILE + 1];
  const int ty = threadIdx.x / TILE, tx = threadIdx.x % TILE;
  const int row = blockIdx.y * TILE + ty;
  const int col = blockIdx.x * TILE + tx;
  const int brow = blockIdx.x * TILE + ty;  // the row of B (an N index) this thread loads
  float acc = 0.0f;
  for (int k0 = 0; k0 < p.K; k0 += TILE) {
    const int k = k0 + tx;  // consecutive threads read consecutive K: coalesced
    As[ty][tx] = (row < p.M && k < p.K) ? __half2float(p.A[(size_t)row * p.lda + k]) : 0.0f;
    Bs[ty][tx] = (brow < p.N && k < p.K) ? __half2float(p.B[(size_t)brow * p.ldb + k]) : 0.0f;
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < TILE; ++kk) acc += As[ty][kk] * Bs[tx][kk];
    __syncthreads();
  }
  if (row < p.M && col < p.N) p.C[(size_t)row * p.ldc + col] = __float2half_rn(acc);
>>>>>>> REPLACE
"""

TILE_CONFIG = '{"backend": "wgmma_tma", "bm": 64, "bn": 128, "bk": 64, "warps_m": 1, "warps_n": 1, "stages": 6}'
TURN_3 = f"Hand-written tiles will not reach cuBLAS; let the tile compiler write a wgmma kernel:\n\n```json\n{TILE_CONFIG}\n```\n"

ACTIONS = [TURN_1, TURN_2, TURN_3]
