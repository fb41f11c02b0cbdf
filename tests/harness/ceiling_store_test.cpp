// The stored ceiling's peak only goes up: a baseline measured above it during
// an evaluation raises it for every later process, and nothing lowers it.
#include <gtest/gtest.h>

#include <optional>

#include "confine/confine.hpp"
#include "core/ceiling.hpp"
#include "tests/harness/confine_helpers.hpp"

namespace tessera {
namespace {

DeviceSummary h200(double peak, const std::string& source) {
  DeviceSummary d;
  d.name = "NVIDIA H200";
  d.uuid = "GPU-test-ceiling";
  d.peak_tflops = peak;
  d.peak_source = source;
  d.dram_gbps = 3986;
  d.floor_us = 0.54;
  return d;
}

class CeilingStoreTest : public ::testing::Test {
protected:
  void SetUp() override {
    dir_.emplace(std::filesystem::temp_directory_path(), "tessera-ceiling-test-");
    env_.emplace("TESSERA_CACHE_DIR", dir_->path().string());
  }
  std::optional<ScratchDir> dir_;
  std::optional<testing::ScopedEnv> env_;
};

TEST_F(CeilingStoreTest, ABaselineAboveTheStoredPeakRaisesIt) {
  const auto probe = h200(665, "cublas_tn at 4096^3, probe");
  store_ceiling(probe, {{"peak_tflops", 665.0}, {"peak_source", probe.peak_source}, {"dram_gbps", 3986.0},
                                {"floor_us", 0.54}});
  EXPECT_TRUE(raise_stored_peak(h200(759, "cublas_nn at 4096x4096x4096, during an evaluation")));
  const auto stored = load_ceiling("GPU-test-ceiling");
  ASSERT_TRUE(stored);
  EXPECT_DOUBLE_EQ(stored->value("peak_tflops", 0.0), 759);
  EXPECT_EQ(stored->value("peak_source", std::string()), "cublas_nn at 4096x4096x4096, during an evaluation");
  EXPECT_DOUBLE_EQ(stored->value("dram_gbps", 0.0), 3986) << "the bandwidth and floor are kept";
  EXPECT_DOUBLE_EQ(stored->value("floor_us", 0.0), 0.54);
}

TEST_F(CeilingStoreTest, ALowerOrEqualPeakNeverLowersIt) {
  store_ceiling(h200(759, "x"), {{"peak_tflops", 759.0}, {"peak_source", "x"}, {"dram_gbps", 3986.0},
                                         {"floor_us", 0.54}});
  EXPECT_FALSE(raise_stored_peak(h200(700, "a slower run")));
  EXPECT_FALSE(raise_stored_peak(h200(759, "the same")));
  EXPECT_DOUBLE_EQ(load_ceiling("GPU-test-ceiling")->value("peak_tflops", 0.0), 759);
}

TEST_F(CeilingStoreTest, NothingStoredMeansNothingWritten) {
  // A partial ceiling (a peak without bandwidth and floor) would be trusted as
  // a whole by the next process: the full measurement comes first.
  EXPECT_FALSE(raise_stored_peak(h200(759, "during an evaluation")));
  EXPECT_FALSE(load_ceiling("GPU-test-ceiling"));
}

TEST_F(CeilingStoreTest, RaisePeakMovesTheDeviceAndTheStoreUpOnly) {
  store_ceiling(h200(684, "probe"), {{"peak_tflops", 684.0}, {"peak_source", "probe"}, {"dram_gbps", 3986.0},
                                             {"floor_us", 0.54}});
  DeviceSummary d = h200(684, "probe");
  EXPECT_FALSE(raise_peak(d, 650, "a slower shape"));
  EXPECT_DOUBLE_EQ(d.peak_tflops, 684);
  EXPECT_TRUE(raise_peak(d, 804, "cublas_nn at 16384x2048x12288, during a sweep"));
  EXPECT_DOUBLE_EQ(d.peak_tflops, 804);
  EXPECT_EQ(d.peak_source, "cublas_nn at 16384x2048x12288, during a sweep");
  EXPECT_DOUBLE_EQ(load_ceiling("GPU-test-ceiling")->value("peak_tflops", 0.0), 804);
  // Without a stored ceiling the device's figure still rises; nothing is written.
  std::filesystem::remove(ceiling_path("GPU-test-ceiling"));
  EXPECT_TRUE(raise_peak(d, 810, "later"));
  EXPECT_DOUBLE_EQ(d.peak_tflops, 810);
  EXPECT_FALSE(load_ceiling("GPU-test-ceiling"));
}

}  // namespace
}  // namespace tessera
