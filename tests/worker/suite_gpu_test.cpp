// Every baseline computes the right thing (all output elements checked
// against an fp64 reference), the autotuner returns a measured algorithm, and
// the cache is used on the second run. No timing assertions.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <random>

#include "worker/baselines/baselines.hpp"
#include "worker/baselines/kernels.hpp"
#include "worker/baselines/sample_check.hpp"
#include "worker/check.hpp"
#include "worker/handles.hpp"
#include "tests/testing.hpp"

namespace tessera::baselines {
namespace {

namespace fs = std::filesystem;

// Small shapes converge fast; loose stopping keeps the suite quick.
worker::TimingOptions quick_timing() {
  worker::TimingOptions o;
  o.warmup_calls = 1;
  o.min_samples = 3;
  o.min_time_ms = 1.0;
  o.timeout_ms = 100.0;
  return o;
}

struct Problem {
  Task task;
  worker::Stream stream;
  worker::DeviceBuffer A, B, C, bias;
  GemmOperands ops;

  explicit Problem(const Task& t)
      : task(t),
        A(std::size_t(t.m * t.k) * sizeof(__half)),
        B(std::size_t(t.n * t.k) * sizeof(__half)),
        C(std::size_t(t.m * t.n) * sizeof(__half)),
        bias(t.epilogue == Epilogue::none ? 0 : std::size_t(t.n) * sizeof(__half)) {
    fill_random_half(A.as<__half>(), std::size_t(t.m * t.k), 11, -1, 1, stream.get());
    fill_random_half(B.as<__half>(), std::size_t(t.n * t.k), 12, -1, 1, stream.get());
    if (bias.get()) fill_random_half(bias.as<__half>(), std::size_t(t.n), 13, -1, 1, stream.get());
    TESSERA_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
    ops = operands_for(t, A.as<__half>(), B.as<__half>(), C.as<__half>(), bias.as<__half>());
  }

  // Runs one baseline once on NaN-poisoned output and checks every element.
  SampleCheck run_and_check(const Baseline& b) {
    TESSERA_CUDA_CHECK(cudaMemsetAsync(C.get(), 0xFF, C.bytes(), stream.get()));
    b.launch(stream.get());
    TESSERA_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
    return check_sampled(ops, stream.get(), int(task.m * task.n));
  }
};

SuiteOptions no_cache() {
  SuiteOptions o;
  o.use_cache = false;
  o.autotune_max_algos = 4;
  return o;
}

class BaselineCorrectness : public ::testing::TestWithParam<std::tuple<std::string, std::string, std::string>> {};

TEST_P(BaselineCorrectness, EveryRunnableBaselineMatchesTheReference) {
  TESSERA_REQUIRE_GPU();
  const auto& [shape, layout, epilogue] = GetParam();
  Problem p(task_from_shape(shape, layout, epilogue));
  worker::Timer timer(p.stream.get(), quick_timing());
  BaselineSuite suite(p.task, p.ops, p.stream.get(), no_cache());
  suite.prepare(timer);
  ASSERT_EQ(suite.baselines().size(), 4u);
  for (const auto& b : suite.baselines()) {
    SCOPED_TRACE(b.name);
    if (p.task.epilogue != Epilogue::none && (b.name == kCublasTN || b.name == kCublasNN)) {
      EXPECT_EQ(b.error, kNoFusedEpilogue);
      EXPECT_FALSE(b.runnable());
      continue;
    }
    ASSERT_TRUE(b.runnable()) << b.error;
    EXPECT_FALSE(b.algo.empty());
    const SampleCheck c = p.run_and_check(b);
    EXPECT_EQ(c.checked, p.task.m * p.task.n);
    EXPECT_TRUE(c.passed) << c.error << " (max normalised error " << c.max_norm_err << ")";
  }
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, BaselineCorrectness,
    ::testing::Values(std::make_tuple("128x256x64", "TN", "none"), std::make_tuple("128x256x64", "NN", "none"),
                      std::make_tuple("100x72x40", "TN", "none"), std::make_tuple("100x72x40", "NN", "none"),
                      std::make_tuple("128x256x64", "TN", "bias"), std::make_tuple("128x256x64", "NN", "bias_relu"),
                      std::make_tuple("128x256x64", "TN", "bias_gelu")));

// Operands that are not 256-byte aligned (a worker may place them between
// canary bands): every baseline either computes the right answer or says
// why it cannot run; none may pick an algorithm that needs more alignment.
TEST(BaselineSuite, MisalignedOperandsAreCorrectOrRefused) {
  TESSERA_REQUIRE_GPU();
  worker::Stream stream;
  constexpr std::size_t kPad = 64;  // elements of slack for the offsets
  for (const char* epilogue : {"none", "bias"}) {
    const Task t = task_from_shape("96x80x48", "TN", epilogue);
    worker::DeviceBuffer A((std::size_t(t.m * t.k) + kPad) * sizeof(__half));
    worker::DeviceBuffer B((std::size_t(t.n * t.k) + kPad) * sizeof(__half));
    worker::DeviceBuffer C((std::size_t(t.m * t.n) + kPad) * sizeof(__half));
    worker::DeviceBuffer bias((std::size_t(t.n) + kPad) * sizeof(__half));
    for (std::size_t offset : {std::size_t{8}, std::size_t{1}}) {  // 16-byte and 2-byte aligned
      SCOPED_TRACE(std::string(epilogue) + " offset " + std::to_string(offset));
      const GemmOperands ops = operands_for(t, A.as<__half>() + offset, B.as<__half>() + offset,
                                            C.as<__half>() + offset, bias.as<__half>() + offset);
      fill_random_half(A.as<__half>() + offset, std::size_t(t.m * t.k), 21, -1, 1, stream.get());
      fill_random_half(B.as<__half>() + offset, std::size_t(t.n * t.k), 22, -1, 1, stream.get());
      fill_random_half(bias.as<__half>() + offset, std::size_t(t.n), 23, -1, 1, stream.get());
      worker::Timer timer(stream.get(), quick_timing());
      BaselineSuite suite(t, ops, stream.get(), no_cache());
      suite.prepare(timer);
      for (const auto& b : suite.baselines()) {
        SCOPED_TRACE(b.name);
        if (!b.runnable()) {
          EXPECT_FALSE(b.error.empty());
          continue;
        }
        TESSERA_CUDA_CHECK(cudaMemsetAsync(ops.C, 0xFF, std::size_t(t.m * t.n) * sizeof(__half), stream.get()));
        b.launch(stream.get());
        TESSERA_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
        const SampleCheck c = check_sampled(ops, stream.get(), int(t.m * t.n));
        EXPECT_TRUE(c.passed) << c.error;
      }
    }
  }
}

TEST(BaselineSuite, AutotunedHasAMeasuredAlgorithm) {
  TESSERA_REQUIRE_GPU();
  Problem p(task_from_shape("256x256x128", "TN"));
  worker::Timer timer(p.stream.get(), quick_timing());
  BaselineSuite suite(p.task, p.ops, p.stream.get(), no_cache());
  const Baseline* before = suite.find(kCublasLtAutotuned);
  ASSERT_NE(before, nullptr);
  EXPECT_FALSE(before->runnable());  // not prepared yet
  suite.prepare(timer);
  const Baseline* tuned = suite.find(kCublasLtAutotuned);
  ASSERT_TRUE(tuned->runnable()) << tuned->error;
  const auto& rep = suite.autotune_report();
  EXPECT_FALSE(rep.at("from_cache").get<bool>());
  ASSERT_FALSE(rep.at("tried").empty());
  EXPECT_LE(rep.at("tried").size(), 4u);
  EXPECT_GT(rep.at("median_us").get<double>(), 0.0);
  // Round two re-timed round one's fastest few (up to 3), and the winner is
  // round two's fastest, with the median the report gives.
  const auto trials = autotune_trials(rep);
  int measured = 0, finalists = 0;
  double fastest_final = 0;
  for (const auto& t : trials) {
    measured += t.median_us > 0;
    if (t.final_us > 0) {
      ++finalists;
      if (fastest_final == 0 || t.final_us < fastest_final) fastest_final = t.final_us;
    }
  }
  if (measured > 1) {
    EXPECT_EQ(finalists, std::min(measured, 3));
    EXPECT_DOUBLE_EQ(rep.at("median_us").get<double>(), fastest_final);
    EXPECT_GT(trials[std::size_t(rep.at("chosen").get<int>())].final_us, 0.0);
  }
  EXPECT_TRUE(p.run_and_check(*tuned).passed);
  const TimingStats st = timer.cold(tuned->launch);
  EXPECT_EQ(st.status, "measured");
  EXPECT_GT(st.median_us, 0.0);
}

TEST(BaselineSuite, SecondRunUsesTheCachedChoiceUnlessRemeasured) {
  TESSERA_REQUIRE_GPU();
  const fs::path dir = fs::temp_directory_path() / ("tessera_suite_cache_" + std::to_string(std::random_device{}()));
  Problem p(task_from_shape("192x128x64", "NN", "bias"));
  worker::Timer timer(p.stream.get(), quick_timing());
  SuiteOptions o;
  o.cache_dir = dir;
  o.autotune_max_algos = 3;
  {
    BaselineSuite first(p.task, p.ops, p.stream.get(), o);
    first.prepare(timer);
    EXPECT_FALSE(first.autotune_report().at("from_cache").get<bool>());
    first.record_times({{kCublasLtAutotuned, "", TimingStats{"measured", "test", 1}, ""}});
  }
  {
    BaselineSuite second(p.task, p.ops, p.stream.get(), o);
    second.prepare(timer);
    EXPECT_TRUE(second.autotune_report().at("from_cache").get<bool>());
    EXPECT_TRUE(second.previous_times_us().contains(kCublasLtAutotuned));
    const Baseline* tuned = second.find(kCublasLtAutotuned);
    ASSERT_TRUE(tuned->runnable()) << tuned->error;
    EXPECT_TRUE(p.run_and_check(*tuned).passed);
  }
  {
    o.remeasure = true;
    BaselineSuite third(p.task, p.ops, p.stream.get(), o);
    third.prepare(timer);
    EXPECT_FALSE(third.autotune_report().at("from_cache").get<bool>());
    EXPECT_TRUE(third.previous_times_us().empty());
  }
  fs::remove_all(dir);
}

TEST(BaselineSuite, RefreshInputsKeepsTheOtherLayoutInSync) {
  TESSERA_REQUIRE_GPU();
  Problem p(task_from_shape("64x96x32", "TN"));
  worker::Timer timer(p.stream.get(), quick_timing());
  BaselineSuite suite(p.task, p.ops, p.stream.get(), no_cache());
  fill_random_half(p.B.as<__half>(), std::size_t(p.task.n * p.task.k), 99, -1, 1, p.stream.get());
  const Baseline* nn = suite.find(kCublasNN);  // uses the transposed copy of B
  ASSERT_TRUE(nn->runnable());
  EXPECT_FALSE(p.run_and_check(*nn).passed);  // stale copy: the check must notice
  suite.refresh_inputs();
  EXPECT_TRUE(p.run_and_check(*nn).passed);
}

}  // namespace
}  // namespace tessera::baselines
