// tessera candidate ABI, version 1 (docs/abi.md).
//
// Every candidate includes this header. The harness injects it into NVRTC
// compiles and passes -I for nvcc compiles, so candidates write
//   #include "tessera_abi.cuh"
//
// Device-only candidate (compiled by NVRTC, launched by the harness):
//   extern "C" __global__ void tessera_hgemm(const __grid_constant__ TesseraGemmParams p);
//   extern "C" __device__ const TesseraLaunchContract tessera_contract = {...};
// The harness reads tessera_contract from the compiled module and launches
//   grid  = (ceil(N / tile_n), ceil(M / tile_m), split_k)          [tiled]
//        or (min(tiles * split_k, num_SMs * persistent_ctas_per_sm), 1, 1) [persistent]
//   block = (block_threads, 1, 1), dynamic shared memory = dynamic_smem_bytes,
//   cluster = (cluster_x, cluster_y, 1) when either is > 1.
// The kernel may remap blockIdx freely (rasterisation, swizzle).
//
// Full translation unit (compiled by nvcc into a shared object):
//   extern "C" int tessera_launch(const TesseraGemmParams* p, cudaStream_t stream);
//   extern "C" unsigned long long tessera_workspace_bytes(int M, int N, int K);  // optional
// It returns 0 on success. It must launch all its work on `stream`.
//
// Workspace: zero-filled once when allocated. A kernel that uses it (split-K
// semaphores, partial sums) must leave it all-zero again when it finishes;
// the harness checks this.
#pragma once
#include <cuda_fp16.h>

#define TESSERA_ABI_VERSION 1

// Same size and alignment as the driver's CUtensorMap (128 bytes, 64-aligned).
struct __align__(64) TesseraTensorMap {
  unsigned long long opaque[16];
};

// Epilogue identifiers; a candidate declares the one it implements.
#define TESSERA_EPILOGUE_NONE 0
#define TESSERA_EPILOGUE_BIAS 1
#define TESSERA_EPILOGUE_BIAS_RELU 2
#define TESSERA_EPILOGUE_BIAS_GELU 3  // tanh approximation, as cuBLASLt's GELU

struct TesseraGemmParams {
  const __half* A;  // M×K row-major, lda = K
  const __half* B;  // TN: N×K row-major (ldb = K); NN: K×N row-major (ldb = N)
  __half* C;        // M×N row-major, ldc = N
  const __half* bias;  // length N, added to every row; nullptr when epilogue is none
  void* workspace;
  unsigned long long workspace_bytes;
  int M, N, K;
  int lda, ldb, ldc;
  int layout;  // 0 = TN, 1 = NN
  int num_sms;
  // Tensor maps are encoded by the harness when the contract asks for them
  // (tma_*_box_rows > 0); otherwise they are zero. Use with __grid_constant__.
  TesseraTensorMap tma_a;  // over A: rows = M, cols = K, box = (tma_a_box_rows, tma_a_box_cols)
  TesseraTensorMap tma_b;  // over B as stored: rows = N (TN) or K (NN)
  TesseraTensorMap tma_c;  // over C: rows = M, cols = N
};

struct TesseraLaunchContract {
  int abi_version;  // TESSERA_ABI_VERSION
  int block_threads;
  int tile_m, tile_n;
  int split_k;                // >= 1, becomes grid.z in tiled mode
  int persistent_ctas_per_sm; // 0 = one CTA per output tile
  int dynamic_smem_bytes;
  int cluster_x, cluster_y;   // 1 = no cluster
  int epilogue;               // TESSERA_EPILOGUE_*
  int layout;                 // 0 = TN, 1 = NN; must match the task
  unsigned long long workspace_bytes;  // fixed size; 0 = none
  // Tensor-map boxes in elements (rows × cols of the row-major tensor);
  // 0 = no tensor map. Swizzle in bytes: 0, 32, 64 or 128.
  int tma_a_box_rows, tma_a_box_cols;
  int tma_b_box_rows, tma_b_box_cols;
  int tma_c_box_rows, tma_c_box_cols;
  int tma_swizzle_bytes;
};
