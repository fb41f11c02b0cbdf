#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "worker/baselines/autotune_cache.hpp"
#include "worker/baselines/baselines.hpp"
#include "core/fs.hpp"

namespace tessera::baselines {
namespace {

namespace fs = std::filesystem;

class AutotuneCacheTest : public ::testing::Test {
protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("tessera_cache_test_" + std::to_string(std::random_device{}()));
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  static CacheKey key() {
    CacheKey k;
    k.gpu_name = "NVIDIA H100 80GB HBM3";
    k.gpu_uuid = "00112233445566778899aabbccddeeff";
    k.task_id = "hgemm_4096x4096x4096_TN_none";
    k.cublaslt_version = 130100;
    k.workspace_bytes = std::size_t{32} << 20;
    k.max_algos = 16;
    k.alignment = "256/256/256";
    return k;
  }
  static AutotuneEntry entry() {
    AutotuneEntry e;
    // Full-width words: JSON numbers would round these through double.
    e.algo_words = {0xffffffffffffffffULL, 1, 0x8000000000000001ULL, 0, 42, 0x0123456789abcdefULL, 7, 0xfedcba9876543210ULL};
    e.algo_desc = "id=66 tile=...";
    e.median_us = 812.5;
    e.algos_tried = 16;
    e.tuned_at = "2026-01-01T00:00:00.000Z";
    e.last_times_us = {{"cublas_tn", 830.0}};
    return e;
  }
  fs::path dir_;
};

TEST_F(AutotuneCacheTest, RoundTripsTheAlgorithmExactly) {
  AutotuneCache cache(dir_);
  EXPECT_FALSE(cache.load(key()).has_value());
  ASSERT_TRUE(cache.store(key(), entry()));
  const auto got = cache.load(key());
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->algo_words, entry().algo_words);
  EXPECT_EQ(got->algo_desc, entry().algo_desc);
  EXPECT_DOUBLE_EQ(got->median_us, 812.5);
  EXPECT_EQ(got->algos_tried, 16);
  EXPECT_EQ(got->last_times_us.at("cublas_tn").get<double>(), 830.0);
}

TEST_F(AutotuneCacheTest, AnyKeyFieldChangeIsAMiss) {
  AutotuneCache cache(dir_);
  ASSERT_TRUE(cache.store(key(), entry()));
  auto k = key();
  k.cublaslt_version = 130200;
  EXPECT_FALSE(cache.load(k).has_value());
  k = key();
  k.gpu_uuid = "ffeeddccbbaa99887766554433221100";
  EXPECT_FALSE(cache.load(k).has_value());
  k = key();
  k.max_algos = 4;
  EXPECT_FALSE(cache.load(k).has_value());
  k = key();
  k.alignment = "16/2/256";
  EXPECT_FALSE(cache.load(k).has_value());
}

TEST_F(AutotuneCacheTest, EntryForAnotherKeyInTheSameFileIsAMiss) {
  // Even if two keys ever shared a file name, the stored canonical key decides.
  auto other = key();
  other.gpu_name = "NVIDIA A100";
  const nlohmann::json j = to_json(other, entry());
  EXPECT_FALSE(entry_from_json(j, key()).has_value());
  EXPECT_TRUE(entry_from_json(j, other).has_value());
}

TEST_F(AutotuneCacheTest, CorruptFileIsAMissNotAnError) {
  AutotuneCache cache(dir_);
  fs::create_directories(dir_);
  atomic_write_file(cache.path_for(key()), "{not json");
  EXPECT_FALSE(cache.load(key()).has_value());
  atomic_write_file(cache.path_for(key()), R"({"version":1,"algo_words":[1,2]})");
  EXPECT_FALSE(cache.load(key()).has_value());
  // Numbers no int holds (a cast would be undefined behaviour): a miss too.
  atomic_write_file(cache.path_for(key()), R"({"version":1e300,"algo_words":[1,2]})");
  EXPECT_FALSE(cache.load(key()).has_value());
}

// Only the harness writes the cache; an entry edited by anyone else (an
// algorithm swapped for a slow one inflates every later speedup) or cut
// short is ignored, so the baselines are measured again and stored anew.
TEST_F(AutotuneCacheTest, TamperedOrTruncatedEntryIsIgnoredAndReplaced) {
  AutotuneCache cache(dir_);
  ASSERT_TRUE(cache.store(key(), entry()));
  const auto path = cache.path_for(key());
  const std::string good = read_file(path);
  auto j = nlohmann::json::parse(good);
  j["algo_words"][0] = "0000000000000005";
  atomic_write_file(path, j.dump(2));
  EXPECT_FALSE(cache.load(key()).has_value()) << "an edited algorithm must not be used";
  j = nlohmann::json::parse(good);
  j.erase("digest");
  atomic_write_file(path, j.dump(2));
  EXPECT_FALSE(cache.load(key()).has_value()) << "an entry without a digest is not trusted";
  atomic_write_file(path, good.substr(0, good.size() / 2));
  EXPECT_FALSE(cache.load(key()).has_value()) << "a truncated entry is a miss";
  atomic_write_file(path, good);
  EXPECT_TRUE(cache.load(key()).has_value()) << "the untouched text is still accepted";
  ASSERT_TRUE(cache.store(key(), entry()));
  EXPECT_TRUE(cache.load(key()).has_value());
}

TEST_F(AutotuneCacheTest, DigestDoesNotDependOnLayout) {
  const nlohmann::json j = to_json(key(), entry());
  EXPECT_TRUE(digest_matches(nlohmann::json::parse(j.dump(4))));
  EXPECT_TRUE(entry_from_json(nlohmann::json::parse(j.dump()), key()).has_value());
}

TEST_F(AutotuneCacheTest, FileNameNamesTheTaskAndDependsOnTheKey) {
  auto k = key();
  const std::string a = k.file_name();
  EXPECT_EQ(a.rfind(k.task_id, 0), 0u);
  EXPECT_EQ(a, key().file_name());  // stable
  k.workspace_bytes = 1;
  EXPECT_NE(a, k.file_name());
}

TEST_F(AutotuneCacheTest, UnwritableDirectoryDoesNotThrow) {
  fs::create_directories(dir_);
  const fs::path file = dir_ / "a_file";
  std::ofstream(file) << "x";
  AutotuneCache cache(file / "sub");  // a directory below a regular file cannot exist
  EXPECT_FALSE(cache.store(key(), entry()));
  EXPECT_FALSE(cache.load(key()).has_value());
}

// A profiler announces itself by the injection library it loads; the suite
// then keeps its autotune out of the cache (suite.cpp).
TEST(AttachedProfiler, IsTheInjectionLibraryOrEmpty) {
  const char* before = std::getenv("CUDA_INJECTION64_PATH");
  const std::string saved = before ? before : "";
  ::unsetenv("CUDA_INJECTION64_PATH");
  EXPECT_EQ(attached_profiler(), "");
  ::setenv("CUDA_INJECTION64_PATH", "/opt/nsight-compute/target/linux-desktop-glibc_2_11_3-x64/libTreeLauncherTargetInjection.so", 1);
  EXPECT_EQ(attached_profiler(), "/opt/nsight-compute/target/linux-desktop-glibc_2_11_3-x64/libTreeLauncherTargetInjection.so");
  if (before) ::setenv("CUDA_INJECTION64_PATH", saved.c_str(), 1);
  else ::unsetenv("CUDA_INJECTION64_PATH");
}

// An ncu run whose autotune found CUDA_INJECTION64_PATH unset still had Nsight
// Compute's libraries mapped: those names give the profiler away.
TEST(AttachedProfiler, FindsAnInjectionLibraryAmongTheMappings) {
  std::istringstream none(
      "55d0c0000000-55d0c0100000 r-xp 00000000 08:01 123 /usr/bin/tessera\n"
      "7f0000000000-7f0000100000 rw-p 00000000 00:00 0 \n"
      "7f0000100000-7f0000200000 r-xp 00000000 08:01 456 /usr/lib/x86_64-linux-gnu/libcuda.so.580.95.05\n"
      "7ffd00000000-7ffd00021000 rw-p 00000000 00:00 0                          [stack]\n");
  EXPECT_EQ(injection_library(none), "");
  std::istringstream ncu(
      "55d0c0000000-55d0c0100000 r-xp 00000000 08:01 123 /usr/bin/tessera\n"
      "7f0000300000-7f0000400000 r-xp 00000000 08:01 789 "
      "/opt/nvidia/nsight-compute/2025.3.1/target/linux-desktop-glibc_2_11_3-x64/libTreeLauncherTargetInjection.so\n");
  EXPECT_EQ(injection_library(ncu),
            "/opt/nvidia/nsight-compute/2025.3.1/target/linux-desktop-glibc_2_11_3-x64/libTreeLauncherTargetInjection.so");
  // A folder's name is not the library's.
  std::istringstream folder("7f0000300000-7f0000400000 r-xp 00000000 08:01 789 /opt/injection/libcudart.so.13\n");
  EXPECT_EQ(injection_library(folder), "");
}

}  // namespace
}  // namespace tessera::baselines

namespace tessera::baselines {
namespace {

TEST(AutotuneTrials, EveryAlgorithmTriedWithItsMedianOrWhyItWasNotTimed) {
  const nlohmann::json report = {
      {"from_cache", false},
      {"tried",
       {{{"index", 0}, {"algo", "tile=248"}, {"median_us", 200.4}, {"status", "measured"}, {"final_us", 199.8}},
        {{"index", 1}, {"algo", "tile=201"}, {"error", "cuBLAS refused it"}},
        {{"index", 2}, {"algo", "tile=15"}, {"median_us", 0.0}, {"status", "failed"}},
        {{"index", 3}, {"algo", "tile=455"}, {"median_us", 178.2}, {"status", "measured"}, {"final_us", 177.9}}}},
      {"chosen", 3}};
  const auto trials = autotune_trials(report);
  ASSERT_EQ(trials.size(), 4u);
  EXPECT_EQ(trials[0].index, 0);
  EXPECT_DOUBLE_EQ(trials[0].median_us, 200.4);
  EXPECT_DOUBLE_EQ(trials[0].final_us, 199.8);  // a finalist: re-timed in round two
  EXPECT_TRUE(trials[0].error.empty());
  EXPECT_EQ(trials[1].error, "cuBLAS refused it");
  EXPECT_DOUBLE_EQ(trials[1].final_us, 0.0);
  EXPECT_DOUBLE_EQ(trials[1].median_us, 0.0);
  EXPECT_EQ(trials[2].error, "not measured (failed)");
  EXPECT_EQ(trials[3].index, 3);
  EXPECT_DOUBLE_EQ(trials[3].median_us, 178.2);
  // A result keeps them through its JSON (the worker's reply, a record on disk).
  BaselineResult r{kCublasLtAutotuned, "best of 4 (heuristic #3)", {}, "", trials};
  const BaselineResult back = nlohmann::json(r).get<BaselineResult>();
  ASSERT_EQ(back.autotune.size(), 4u);
  EXPECT_EQ(back.autotune[1].error, "cuBLAS refused it");
  EXPECT_DOUBLE_EQ(back.autotune[3].median_us, 178.2);
  EXPECT_DOUBLE_EQ(back.autotune[3].final_us, 177.9);
  // A record written before the field reads as no trials.
  nlohmann::json old = nlohmann::json(r);
  old.erase("autotune");
  EXPECT_TRUE(old.get<BaselineResult>().autotune.empty());
}

TEST(AutotuneTrials, ACachedChoiceOrAReportWithoutAListHasNone) {
  EXPECT_TRUE(autotune_trials({{"from_cache", true}, {"tried", nlohmann::json::array()}}).empty());
  EXPECT_TRUE(autotune_trials({{"tried", 3}}).empty());
  EXPECT_TRUE(autotune_trials(nlohmann::json()).empty());
  EXPECT_TRUE(autotune_trials({{"tried", {{{"index", "zero"}, {"status", "measured"}}}}}).size() == 1u)
      << "a row of another shape is read leniently, not thrown on";
}

}  // namespace
}  // namespace tessera::baselines
