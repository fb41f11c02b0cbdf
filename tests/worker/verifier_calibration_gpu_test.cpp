// The verifier against cuBLAS: the check that candidates must pass
// (worker/verify.cpp) has to accept cuBLAS's own fp32-accumulate output
// on every trial distribution, at short and at long K, and still reject the
// same library asked to accumulate in fp16. Prints each baseline's error and
// flip fractions, the figures the tolerance was calibrated with.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "worker/baselines/baselines.hpp"
#include "worker/baselines/detail/blas_handles.hpp"
#include "worker/check.hpp"
#include "worker/handles.hpp"
#include "worker/task_buffers.hpp"
#include "worker/verify.hpp"
#include "worker/verify_kernels.hpp"
#include "tests/testing.hpp"

namespace tessera::baselines {
namespace {

using worker::Distribution;

constexpr Distribution kTrials[] = {Distribution::integer, Distribution::uniform_pos, Distribution::mixed_scale,
                                    Distribution::uniform_sym};

struct Bench {
  Task task;
  worker::Stream stream;
  worker::TaskBuffers b;
  GemmOperands ops;

  explicit Bench(const Task& t)
      : task(t),
        b(t, 7),
        ops(operands_for(t, static_cast<const __half*>(b.A.data()), static_cast<const __half*>(b.B.data()),
                         static_cast<__half*>(b.C.data()), nullptr)) {}

  void fill(Distribution d, std::uint64_t seed) {
    worker::fill_random(static_cast<__half*>(b.A.data()), b.A.bytes() / 2, d, seed ^ 0xA, stream.get());
    worker::fill_random(static_cast<__half*>(b.B.data()), b.B.bytes() / 2, d, seed ^ 0xB, stream.get());
    worker::compute_reference(b, stream.get());
  }

  // Poisons C, runs `launch` once and checks C as verification does.
  TrialStats run(const worker::LaunchFn& launch, Distribution d) {
    worker::fill_half_bits(static_cast<__half*>(b.C.data()), b.c_count(), worker::kPoisonBits, stream.get());
    launch(stream.get());
    TESSERA_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
    return worker::check_output(b, stream.get(), worker::distribution_name(d));
  }
};

void print(const std::string& shape, const std::string& who, const TrialStats& t) {
  std::printf("[calibration] %s %-22s %-11s max_abs_err %-9.4g rel_l2 %-9.3g flips %6.2f%%  decided %6.2f%%  %s\n",
              shape.c_str(), who.c_str(), t.distribution.c_str(), t.max_abs_err, t.rel_l2_err,
              100 * t.flip_fraction, 100 * t.decided_flip_fraction, t.passed ? "pass" : "FAIL");
}

// cuBLAS's GEMM with the accumulation in fp16: what the verifier must reject.
worker::LaunchFn fp16_accumulating(const Bench& bench, cublasHandle_t h) {
  const GemmArgs g = gemm_args(bench.task);
  return [&bench, g, h](cudaStream_t s) {
    const __half one = __float2half(1.0f), zero = __float2half(0.0f);
    TESSERA_CUBLAS_CHECK(cublasSetStream(h, s));
    TESSERA_CUBLAS_CHECK(cublasGemmEx(h, g.transa, g.transb, g.m, g.n, g.k, &one, bench.ops.B, CUDA_R_16F, g.lda,
                                      bench.ops.A, CUDA_R_16F, g.ldb, &zero, bench.ops.C, CUDA_R_16F, g.ldc,
                                      CUBLAS_COMPUTE_16F, CUBLAS_GEMM_DEFAULT));
  };
}

class VerifierCalibration : public ::testing::TestWithParam<std::string> {};

TEST_P(VerifierCalibration, AcceptsCublasFp32AndRejectsFp16Accumulation) {
  TESSERA_REQUIRE_GPU();
  const std::string shape = GetParam();
  Bench bench(task_from_shape(shape, "TN"));
  SuiteOptions so;
  so.use_cache = false;
  so.autotune_max_algos = 4;
  BaselineSuite suite(bench.task, bench.ops, bench.stream.get(), so);
  worker::TimingOptions quick;
  quick.warmup_calls = 1;
  quick.min_samples = 3;
  quick.min_time_ms = 1.0;
  quick.timeout_ms = 200.0;
  worker::Timer timer(bench.stream.get(), quick);
  bench.fill(Distribution::uniform_sym, 1);
  suite.prepare(timer);
  auto cublas = detail::make_cublas();

  std::uint64_t seed = 100;
  for (Distribution d : kTrials) {
    bench.fill(d, ++seed);
    suite.refresh_inputs();  // the NN baseline reads a transposed copy of B
    for (const auto& bl : suite.baselines()) {
      ASSERT_TRUE(bl.runnable()) << bl.name << ": " << bl.error;
      const TrialStats t = bench.run(bl.launch, d);
      print(shape, bl.name, t);
      EXPECT_TRUE(t.passed) << bl.name << " (" << bl.algo << ") on " << t.distribution << ": max abs err "
                            << t.max_abs_err << ", " << t.mismatches << " outside tolerance, decided flips "
                            << t.decided_flip_fraction;
    }
    const TrialStats f = bench.run(fp16_accumulating(bench, cublas.get()), d);
    print(shape, "cublas_fp16_accumulate", f);
    // Integers stay exact in fp16 up to 2048; every other distribution must
    // expose the fp16 accumulator, signed data at long K included (its sums
    // stay small, so the per-element allowance alone let it through).
    if (d != Distribution::integer) {
      EXPECT_FALSE(f.passed) << "fp16 accumulation passed on " << f.distribution << " data at " << shape;
    }
  }
}

// K = 1024 (the fault corpus's fp16 kernel fails there), and the long-K
// projection shape (Llama 3 70B down projection) where one fp32 chain runs
// past an fp16 ulp of the sum.
INSTANTIATE_TEST_SUITE_P(Shapes, VerifierCalibration, ::testing::Values("512x1024x1024", "1024x8192x29568"),
                         [](const ::testing::TestParamInfo<std::string>& p) {
                           return p.index == 0 ? std::string("K1024") : std::string("K29568");
                         });

}  // namespace
}  // namespace tessera::baselines
