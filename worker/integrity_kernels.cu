#include "worker/integrity_kernels.hpp"

#include <cmath>
#include <utility>

#include "worker/check.hpp"

// extern "C" and prefixed: CUPTI reports these names verbatim, and the timer
// leaves every kernel with the prefix out of the measured windows.
extern "C" __global__ void tessera_harness_poison(unsigned short* dst, std::size_t count, unsigned short bits) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < count;
       i += std::size_t(gridDim.x) * blockDim.x)
    dst[i] = bits;
}

extern "C" __global__ void tessera_harness_zero(unsigned char* dst, std::size_t bytes) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < bytes;
       i += std::size_t(gridDim.x) * blockDim.x)
    dst[i] = 0;
}

// Fresh U[-1, 1) values into the input the candidate reads and into the
// harness's hidden copy of it, which the reference is computed from. Either
// may be null: the values are a function of (seed, i), so a copy can be
// written again later from the seed alone (hot timing's other input sets).
extern "C" __global__ void tessera_harness_fresh(__half* live, __half* copy, std::size_t count,
                                                 unsigned long long seed) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < count;
       i += std::size_t(gridDim.x) * blockDim.x) {
    const unsigned long long r = tessera::worker::mix64(seed + 0x632BE59BD9B4E019ULL * (i + 1));
    const __half v = __float2half_rn(2.0f * (float(r >> 40) * (1.0f / 16777216.0f)) - 1.0f);
    if (live) live[i] = v;
    if (copy) copy[i] = v;
  }
}

// Fills the block's whole dynamic shared memory with a 32-bit pattern. Shared
// memory keeps what the last kernel on an SM left in it, so a candidate
// launched right after this on the same stream reads the pattern wherever it
// reads shared memory it never wrote.
extern "C" __global__ void tessera_harness_fill_shared(unsigned pattern, unsigned words) {
  extern __shared__ unsigned smem_words[];
  for (unsigned i = threadIdx.x; i < words; i += blockDim.x) smem_words[i] = pattern;
}

namespace {

__device__ inline double activation(double x, int epilogue) {
  if (epilogue == 2) return x > 0 ? x : 0;
  if (epilogue == 3) {  // tanh approximation, as cuBLASLt's GELU
    const double k0 = 0.7978845608028654, k1 = 0.044715;
    return 0.5 * x * (1.0 + tanh(k0 * (x + k1 * x * x * x)));
  }
  return x;
}

__device__ inline double ulp_fp16(double x) {
  x = fabs(x);
  if (x < 6.103515625e-05) return 5.960464477539063e-08;  // subnormal spacing 2^-24
  int e;
  frexp(x, &e);               // x = f * 2^e, f in [0.5, 1)
  return ldexp(1.0, e - 11);  // 10 mantissa bits
}

__device__ void atomic_max_nonneg(double* addr, double v) {
  // Non-negative doubles order like their bit patterns.
  atomicMax(reinterpret_cast<unsigned long long*>(addr), static_cast<unsigned long long>(__double_as_longlong(v)));
}

}  // namespace

extern "C" __global__ void tessera_harness_check(tessera::worker::CheckArgs a, tessera::worker::CompareStats* out) {
  using tessera::worker::kPoisonBits;
  unsigned long long mism = 0, unwr = 0, nonf = 0, flips = 0, decided = 0;
  double maxe = 0, se = 0, sr = 0;
  // GELU/ReLU have slope <= 1.13, so the accumulation error passes through scaled at most that much.
  const double slope = a.epilogue == 3 ? 1.13 : 1.0;
  const std::size_t count = a.m * a.n;
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < count;
       i += std::size_t(gridDim.x) * blockDim.x) {
    const std::size_t col = i % a.n;
    double r = a.acc[i];
    if (a.epilogue != 0) r = activation(r + double(__half2float(a.bias[col])), a.epilogue);
    const unsigned short bits = __half_as_ushort(a.C[i]);
    if (bits == kPoisonBits) {
      ++unwr;
      ++mism;
      continue;
    }
    const double c = double(__half2float(a.C[i]));
    if (!isfinite(c)) {
      if (!(fabs(r) > 65504.0 && isinf(c) && (c > 0) == (r > 0))) {
        ++nonf;
        ++mism;
      }
      continue;
    }
    const double err = fabs(c - r);
    const double allowance = a.gamma * a.absacc[i] * slope;  // what fp32 accumulation may lose
    if (err > ulp_fp16(r) + allowance) ++mism;
    const unsigned short rounded = __half_as_ushort(__double2half(r));
    if (rounded != bits && !(r == 0.0 && c == 0.0)) {
      ++flips;
      // Where r - allowance and r + allowance round alike, no fp32 accumulation
      // within its allowance can round differently: such a flip is lost
      // precision. Elsewhere (long K, positive sums) a flip is the allowance.
      if (__half_as_ushort(__double2half(r - allowance)) == rounded &&
          __half_as_ushort(__double2half(r + allowance)) == rounded)
        ++decided;
    }
    maxe = fmax(maxe, err);
    se += err * err;
    sr += r * r;
  }
  // Warp-level reduction first, to keep atomics few.
  for (int off = 16; off > 0; off /= 2) {
    mism += __shfl_down_sync(0xffffffffu, mism, off);
    unwr += __shfl_down_sync(0xffffffffu, unwr, off);
    nonf += __shfl_down_sync(0xffffffffu, nonf, off);
    flips += __shfl_down_sync(0xffffffffu, flips, off);
    decided += __shfl_down_sync(0xffffffffu, decided, off);
    maxe = fmax(maxe, __shfl_down_sync(0xffffffffu, maxe, off));
    se += __shfl_down_sync(0xffffffffu, se, off);
    sr += __shfl_down_sync(0xffffffffu, sr, off);
  }
  if (threadIdx.x % 32 == 0) {
    if (mism) atomicAdd(&out->mismatches, mism);
    if (unwr) atomicAdd(&out->unwritten, unwr);
    if (nonf) atomicAdd(&out->nonfinite, nonf);
    if (flips) atomicAdd(&out->flips, flips);
    if (decided) atomicAdd(&out->decided_flips, decided);
    atomic_max_nonneg(&out->max_abs_err, maxe);
    atomicAdd(&out->sum_sq_err, se);
    atomicAdd(&out->sum_sq_ref, sr);
  }
}

namespace tessera::worker {

void harness_poison(__half* dst, std::size_t count, cudaStream_t s) {
  if (count == 0) return;
  tessera_harness_poison<<<harness_blocks(count), kHarnessThreads, 0, s>>>(reinterpret_cast<unsigned short*>(dst),
                                                                           count, kPoisonBits);
}

void harness_zero(void* dst, std::size_t bytes, cudaStream_t s) {
  if (bytes == 0) return;
  tessera_harness_zero<<<harness_blocks(bytes), kHarnessThreads, 0, s>>>(static_cast<unsigned char*>(dst), bytes);
}

void harness_fresh(__half* live, __half* copy, std::size_t count, std::uint64_t seed, cudaStream_t s) {
  if (count == 0) return;
  tessera_harness_fresh<<<harness_blocks(count), kHarnessThreads, 0, s>>>(live, copy, count, seed);
}

void harness_fill_shared(std::uint32_t pattern, cudaStream_t s) {
  // Once per process: the device's opt-in maximum per block, and the carveout
  // that gives shared memory all it can, so one block covers an SM's whole
  // shared memory and no two blocks share an SM at once.
  static const auto grid = [] {
    int dev = 0, sms = 0, optin = 0;
    TESSERA_CUDA_CHECK(cudaGetDevice(&dev));
    TESSERA_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    TESSERA_CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
    TESSERA_CUDA_CHECK(cudaFuncSetAttribute(tessera_harness_fill_shared, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                            optin));
    TESSERA_CUDA_CHECK(cudaFuncSetAttribute(tessera_harness_fill_shared,
                                            cudaFuncAttributePreferredSharedMemoryCarveout,
                                            int(cudaSharedmemCarveoutMaxShared)));
    return std::pair{sms, optin};
  }();
  const auto [sms, bytes] = grid;
  tessera_harness_fill_shared<<<unsigned(sms * kSharedFillWaves), kHarnessThreads, std::size_t(bytes), s>>>(
      pattern, unsigned(bytes) / 4u);
}

void harness_check(const CheckArgs& args, CompareStats* out_device, cudaStream_t s) {
  tessera_harness_check<<<reduction_blocks(args.m * args.n), kHarnessThreads, 0, s>>>(args, out_device);
}

}  // namespace tessera::worker
