// Standalone GPU smoke test for emitted tile kernels, independent of the
// sandbox: NVRTC compile -> read the contract -> encode tensor maps -> launch
// -> compare with an fp32 reference -> time against cuBLAS (warm, events).
// Build: nvcc -O2 -std=c++17 -arch=sm_90a tile_smoke.cu -lcuda -lnvrtc -lcublas -o tile_smoke
// Run:   tests/tile/tools/run_smoke.sh (emits the set, builds this, runs it)
// A kernel patched by trace_patch.py also has its per-CTA timeline written
// next to it (see trace_report.py).
#include <cublas_v2.h>
#include <cuda.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <nvrtc.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "../../../core/abi/tessera_abi.cuh"

#define CK(x)                                                                         \
  do {                                                                                \
    cudaError_t e_ = (x);                                                             \
    if (e_ != cudaSuccess) {                                                          \
      std::printf("CUDA error %s at %s:%d\n", cudaGetErrorString(e_), __FILE__, __LINE__); \
      std::exit(1);                                                                   \
    }                                                                                 \
  } while (0)

static std::string slurp(const std::string& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

__global__ void fill(__half* p, size_t n, unsigned seed) {
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (i >= n) return;
  unsigned x = (unsigned)(i * 2654435761u) ^ seed;
  x ^= x >> 13; x *= 0x5bd1e995; x ^= x >> 15;
  p[i] = __float2half(((x & 0xFFFF) / 65535.0f) * 2.0f - 1.0f);
}

__global__ void reference(const __half* A, const __half* B, const __half* bias, float* C, int M, int N, int K, int nn,
                          int epi) {
  int col = blockIdx.x * blockDim.x + threadIdx.x, row = blockIdx.y;
  if (col >= N || row >= M) return;
  float acc = 0;
  for (int k = 0; k < K; ++k) {
    float b = nn ? __half2float(B[(size_t)k * N + col]) : __half2float(B[(size_t)col * K + k]);
    acc += __half2float(A[(size_t)row * K + k]) * b;
  }
  if (epi > 0) acc += __half2float(bias[col]);
  if (epi == 2) acc = fmaxf(acc, 0.f);
  if (epi == 3) acc = 0.5f * acc * (1.f + tanhf(0.7978845608028654f * (acc + 0.044715f * acc * acc * acc)));
  C[(size_t)row * N + col] = acc;
}

static void encode(CUtensorMap* out, void* base, long rows, long cols, int br, int bc, int swz) {
  if (br <= 0) return;
  cuuint64_t dims[2] = {(cuuint64_t)cols, (cuuint64_t)rows};
  cuuint64_t strides[1] = {(cuuint64_t)cols * 2};
  cuuint32_t box[2] = {(cuuint32_t)bc, (cuuint32_t)br};
  cuuint32_t elem[2] = {1, 1};
  CUtensorMapSwizzle sw = swz == 128 ? CU_TENSOR_MAP_SWIZZLE_128B : swz == 64 ? CU_TENSOR_MAP_SWIZZLE_64B
                        : swz == 32 ? CU_TENSOR_MAP_SWIZZLE_32B : CU_TENSOR_MAP_SWIZZLE_NONE;
  CUresult r = cuTensorMapEncodeTiled(out, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, base, dims, strides, box, elem,
                                      CU_TENSOR_MAP_INTERLEAVE_NONE, sw, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                                      CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS) std::printf("  tensor map encode failed %d\n", (int)r);
}

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  CK(cudaFree(0));
  int dev = 0, sms = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  const std::string header = slurp(std::string(argv[1]).substr(0, std::string(argv[1]).rfind('/') + 1) + "tessera_abi.cuh");
  int l2 = 0;
  CK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev));
  const size_t scrub_bytes = 2 * (size_t)l2;  // what a trace's cold launch writes over the L2 first
  void* scrub = nullptr;                        // allocated at the first traced kernel
  cublasHandle_t blas;
  cublasCreate(&blas);
  std::ifstream man(argv[1]);
  std::string file, lay, epis;
  long M, N, K;
  while (man >> file >> M >> N >> K >> lay >> epis) {
    const int nn = lay == "NN";
    const int epi = epis == "none" ? 0 : epis == "bias" ? 1 : epis == "bias_relu" ? 2 : 3;
    std::string src = slurp(file);
    nvrtcProgram prog;
    const char* hs[] = {header.c_str()};
    const char* hn[] = {"tessera_abi.cuh"};
    nvrtcCreateProgram(&prog, src.c_str(), "k.cu", 1, hs, hn);
    const char* opts[] = {"-arch=sm_90a", "-std=c++17", "-I/usr/local/cuda/include"};
    if (nvrtcCompileProgram(prog, 3, opts) != NVRTC_SUCCESS) {
      size_t n; nvrtcGetProgramLogSize(prog, &n); std::string log(n, 0); nvrtcGetProgramLog(prog, &log[0]);
      std::printf("%s COMPILE_FAIL %s\n", file.c_str(), log.substr(0, 600).c_str());
      continue;
    }
    size_t n; nvrtcGetCUBINSize(prog, &n); std::string cubin(n, 0); nvrtcGetCUBIN(prog, &cubin[0]);
    nvrtcDestroyProgram(&prog);
    CUmodule mod; CUfunction fn; CUdeviceptr cptr; size_t csz;
    if (cuModuleLoadData(&mod, cubin.data()) != CUDA_SUCCESS) { std::printf("%s LOAD_FAIL\n", file.c_str()); continue; }
    cuModuleGetFunction(&fn, mod, "tessera_hgemm");
    cuModuleGetGlobal(&cptr, &csz, mod, "tessera_contract");
    TesseraLaunchContract c;
    cuMemcpyDtoH(&c, cptr, sizeof c);
    cuFuncSetAttribute(fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, c.dynamic_smem_bytes);
    int regs = 0; cuFuncGetAttribute(&regs, CU_FUNC_ATTRIBUTE_NUM_REGS, fn);

    __half *A, *B, *C, *Cb, *bias; float* R; void* ws = nullptr;
    CK(cudaMalloc(&A, M * K * 2)); CK(cudaMalloc(&B, N * K * 2)); CK(cudaMalloc(&C, M * N * 2));
    CK(cudaMalloc(&Cb, M * N * 2)); CK(cudaMalloc(&bias, N * 2)); CK(cudaMalloc(&R, M * N * 4));
    if (c.workspace_bytes) { CK(cudaMalloc(&ws, c.workspace_bytes)); CK(cudaMemset(ws, 0, c.workspace_bytes)); }
    fill<<<(M * K + 255) / 256, 256>>>(A, M * K, 1); fill<<<(N * K + 255) / 256, 256>>>(B, N * K, 2);
    fill<<<(N + 255) / 256, 256>>>(bias, N, 3);
    CK(cudaMemset(C, 0xFF, M * N * 2));  // NaN poison
    reference<<<dim3((N + 127) / 128, M), 128>>>(A, B, bias, R, M, N, K, nn, epi);
    CK(cudaDeviceSynchronize());

    TesseraGemmParams p{};
    p.A = A; p.B = B; p.C = C; p.bias = epi ? bias : nullptr; p.workspace = ws; p.workspace_bytes = c.workspace_bytes;
    p.M = M; p.N = N; p.K = K; p.lda = K; p.ldb = nn ? N : K; p.ldc = N; p.layout = nn; p.num_sms = sms;
    encode((CUtensorMap*)&p.tma_a, A, M, K, c.tma_a_box_rows, c.tma_a_box_cols, c.tma_swizzle_bytes);
    encode((CUtensorMap*)&p.tma_b, B, nn ? K : N, nn ? N : K, c.tma_b_box_rows, c.tma_b_box_cols, c.tma_swizzle_bytes);
    encode((CUtensorMap*)&p.tma_c, C, M, N, c.tma_c_box_rows, c.tma_c_box_cols, c.tma_swizzle_bytes);
    CUlaunchConfig cfg{};
    long tn = (N + c.tile_n - 1) / c.tile_n, tm = (M + c.tile_m - 1) / c.tile_m;
    if (c.persistent_ctas_per_sm > 0) {
      cfg.gridDimX = (unsigned)std::min<long>(tn * tm * c.split_k, (long)sms * c.persistent_ctas_per_sm);
      cfg.gridDimY = cfg.gridDimZ = 1;
    } else {
      cfg.gridDimX = tn; cfg.gridDimY = tm; cfg.gridDimZ = c.split_k;
    }
    cfg.blockDimX = c.block_threads; cfg.blockDimY = cfg.blockDimZ = 1;
    cfg.sharedMemBytes = c.dynamic_smem_bytes;
    CUlaunchAttribute attr{};
    if (c.cluster_x * c.cluster_y > 1) {
      attr.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
      attr.value.clusterDim.x = c.cluster_x; attr.value.clusterDim.y = c.cluster_y; attr.value.clusterDim.z = 1;
      cfg.attrs = &attr; cfg.numAttrs = 1;
    }
    void* args[] = {&p};
    CUresult lr = cuLaunchKernelEx(&cfg, fn, args, nullptr);
    cudaError_t se = cudaDeviceSynchronize();
    if (lr != CUDA_SUCCESS || se != cudaSuccess) {
      std::printf("%s %ldx%ldx%ld %s LAUNCH_FAIL cu=%d rt=%s\n", file.c_str(), M, N, K, lay.c_str(), (int)lr,
                  cudaGetErrorString(se));
      return 1;  // context is likely dead
    }
    std::vector<__half> hc(M * N); std::vector<float> hr(M * N);
    CK(cudaMemcpy(hc.data(), C, M * N * 2, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(hr.data(), R, M * N * 4, cudaMemcpyDeviceToHost));
    double err2 = 0, ref2 = 0, maxe = 0; long bad = 0, nan = 0;
    for (long i = 0; i < M * N; ++i) {
      float v = __half2float(hc[i]);
      if (!std::isfinite(v)) { ++nan; continue; }
      double d = v - hr[i]; err2 += d * d; ref2 += (double)hr[i] * hr[i]; maxe = std::max(maxe, std::fabs(d));
      if (std::fabs(d) > 0.02 + 0.01 * std::fabs(hr[i])) ++bad;
    }
    bool ws_zero = true;
    if (ws) {
      std::vector<unsigned char> hw(c.workspace_bytes);
      CK(cudaMemcpy(hw.data(), ws, c.workspace_bytes, cudaMemcpyDeviceToHost));
      for (auto b : hw) ws_zero &= b == 0;
    }
    const double rel = std::sqrt(err2 / std::max(ref2, 1e-30));
    const bool ok = nan == 0 && bad == 0 && rel < 2e-3 && ws_zero;
    // timing (warm, events): candidate vs cuBLAS
    cudaEvent_t e0, e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
    const int iters = M * N * K > 1e11 ? 20 : 100;
    for (int i = 0; i < 3; ++i) cuLaunchKernelEx(&cfg, fn, args, nullptr);
    cudaEventRecord(e0);
    for (int i = 0; i < iters; ++i) cuLaunchKernelEx(&cfg, fn, args, nullptr);
    cudaEventRecord(e1); cudaEventSynchronize(e1);
    float ms_k; cudaEventElapsedTime(&ms_k, e0, e1);
    const float one = 1.f, zero = 0.f;
    auto blas_call = [&] {
      if (nn) cublasGemmEx(blas, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &one, B, CUDA_R_16F, N, A, CUDA_R_16F, K, &zero, Cb, CUDA_R_16F, N, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
      else cublasGemmEx(blas, CUBLAS_OP_T, CUBLAS_OP_N, N, M, K, &one, B, CUDA_R_16F, K, A, CUDA_R_16F, K, &zero, Cb, CUDA_R_16F, N, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    };
    for (int i = 0; i < 3; ++i) blas_call();
    cudaEventRecord(e0);
    for (int i = 0; i < iters; ++i) blas_call();
    cudaEventRecord(e1); cudaEventSynchronize(e1);
    float ms_b; cudaEventElapsedTime(&ms_b, e0, e1);
    const double us_k = 1e3 * ms_k / iters, us_b = 1e3 * ms_b / iters, fl = 2.0 * M * N * K;
    std::printf("%-4s %s %ldx%ldx%ld %s %s regs=%d smem=%d rel=%.2e max=%.3f bad=%ld nan=%ld ws0=%d | %.1f us %.0f TF | cublas %.1f us %.0f TF | x%.3f\n",
                ok ? "OK" : "FAIL", file.c_str(), M, N, K, lay.c_str(), epis.c_str(), regs, c.dynamic_smem_bytes, rel,
                maxe, bad, nan, (int)ws_zero, us_k, fl / us_k / 1e6, us_b, fl / us_b / 1e6, us_b / us_k);
    std::fflush(stdout);
    // A kernel patched by trace_patch.py: three cold launches (the L2 overwritten
    // first, as the harness's cold timing does), each CTA's row to FILE.traceN.tsv.
    CUdeviceptr tptr; size_t tsz;
    if (cuModuleGetGlobal(&tptr, &tsz, mod, "tessera_trace") == CUDA_SUCCESS) {
      std::vector<unsigned long long> rows(tsz / 8);
      if (!scrub) CK(cudaMalloc(&scrub, scrub_bytes));
      for (int rep = 0; rep < 3; ++rep) {
        CK(cudaMemset((void*)tptr, 0, tsz));
        CK(cudaMemset(scrub, rep + 1, scrub_bytes));
        cuLaunchKernelEx(&cfg, fn, args, nullptr);
        CK(cudaDeviceSynchronize());
        CK(cudaMemcpy(rows.data(), (void*)tptr, tsz, cudaMemcpyDeviceToHost));
        std::ofstream out(file + ".trace" + std::to_string(rep) + ".tsv");
        const unsigned ctas = cfg.gridDimX * cfg.gridDimY * cfg.gridDimZ;
        for (unsigned b = 0; b < ctas && (b + 1) * 64 <= rows.size(); ++b) {
          out << b;
          for (int i = 0; i < 64; ++i) out << '\t' << rows[b * 64 + i];
          out << '\n';
        }
      }
      std::printf("     trace: %s.trace{0,1,2}.tsv\n", file.c_str());
    }
    cudaFree(A); cudaFree(B); cudaFree(C); cudaFree(Cb); cudaFree(bias); cudaFree(R); if (ws) cudaFree(ws);
    cuModuleUnload(mod);
  }
  return 0;
}
