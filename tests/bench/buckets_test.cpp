#include <gtest/gtest.h>

#include "bench/buckets.hpp"
#include "core/error.hpp"
#include "core/tasks_file.hpp"

namespace tessera::bench {
namespace {

const std::string kGrid = std::string(TESSERA_SOURCE_DIR) + "/datasets/grid1000.json";

TEST(Buckets, GridFileCarriesTheDefaultEdges) {
  const auto from_file = load_buckets(kGrid);
  const auto defaults = default_buckets();
  ASSERT_EQ(from_file.size(), defaults.size());
  for (std::size_t i = 0; i < defaults.size(); ++i) {
    EXPECT_EQ(from_file[i].name, defaults[i].name);
    EXPECT_EQ(from_file[i].max_flops, defaults[i].max_flops);
  }
}

TEST(Buckets, GridHasTheThousandShapesSplitAsDocumented) {
  const auto tasks = load_tasks_file(kGrid);
  ASSERT_EQ(tasks.size(), 1000u);
  std::map<std::string, int> count;
  for (const auto& t : tasks) {
    EXPECT_EQ(t.layout, Layout::TN);
    ++count[bucket_of(t, default_buckets())];
  }
  EXPECT_EQ(count["small"], 364);  // datasets/README.md
  EXPECT_EQ(count["medium"], 446);
  EXPECT_EQ(count["large"], 190);
  EXPECT_EQ(tasks.front().shape(), "64x64x64");
  EXPECT_EQ(tasks[1].shape(), "64x64x128");  // CUDA-L2's order: K fastest
  EXPECT_EQ(tasks.back().shape(), "16384x16384x16384");
}

TEST(Buckets, SampleCoversEveryBucketEarly) {
  const auto tasks = load_tasks_file(std::string(TESSERA_SOURCE_DIR) + "/datasets/grid1000_sample300.json");
  ASSERT_EQ(tasks.size(), 300u);
  std::set<std::string> first_ten;
  for (int i = 0; i < 10; ++i) first_ten.insert(bucket_of(tasks[std::size_t(i)], default_buckets()));
  EXPECT_EQ(first_ten.size(), 3u);
}

TEST(Buckets, EdgesAreInclusive) {
  const auto b = default_buckets();
  EXPECT_EQ(bucket_of(task_from_shape("512x1024x1024"), b), "small");   // 2^30 FLOP exactly
  EXPECT_EQ(bucket_of(task_from_shape("1024x1024x1024"), b), "medium"); // 2^31
  EXPECT_EQ(bucket_of(task_from_shape("4096x4096x2048"), b), "medium"); // 2^36 exactly
  EXPECT_EQ(bucket_of(task_from_shape("4096x4096x4096"), b), "large");
}

TEST(Buckets, MalformedDefinitionsAreBadInput) {
  using J = nlohmann::json;
  const std::vector<J> bad = {
      J::array(),
      J::parse(R"([{"max_flops": 10}, {"name": "b"}])"),
      J::parse(R"([{"name": "a", "max_flops": 10}, {"name": "a"}])"),
      J::parse(R"([{"name": "a", "max_flops": 10}, {"name": "b", "max_flops": 5}, {"name": "c"}])"),
      J::parse(R"([{"name": "a", "max_flops": 10}, {"name": "b", "max_flops": 20}])"),
      J::parse(R"([{"name": "a"}, {"name": "b"}])"),
      J::parse(R"([{"name": "a", "max_flops": -1}, {"name": "b"}])"),
  };
  for (const auto& j : bad) EXPECT_THROW(parse_buckets(j, "test"), Error) << j.dump();
  EXPECT_EQ(parse_buckets(J::parse(R"([{"name": "all"}])"), "test").size(), 1u);
}

}  // namespace
}  // namespace tessera::bench
