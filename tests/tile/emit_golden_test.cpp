// Every emitted kernel stays byte-identical unless the emitter is meant to
// change: tests/tile/emit_golden.tsv holds, for a few thousand (task, config)
// pairs, the content hash of tile::emit's source, and this test emits each
// pair again and compares. The pairs cover each task's seeds, the cost
// model's top configs and a fixed-seed sample of the space, on sm_90a (both
// backends) and sm_80 (mma_sync), over small, odd and large shapes, both
// layouts and every epilogue.
//
// The file fixes the pairs, so a change to the cost model, the seeds or the
// sampler does not change what is checked; only the emitter (or a config
// becoming illegal) makes this test fail. After an intentional change to the
// emitted source, regenerate it (docs/tile.md, "Emitted kernels are pinned"):
//     TESSERA_EMIT_GOLDEN_UPDATE=1 build/tests/tessera_test_tile --gtest_filter='TileEmitGolden.*'
// which draws the pairs afresh and rewrites the file in the source tree.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "core/hash.hpp"
#include "core/task.hpp"
#include "tile/cost_model.hpp"
#include "tile/emit.hpp"
#include "tile/legality.hpp"
#include "tile/space.hpp"

namespace tessera::tile {
namespace {

constexpr const char* kGoldenPath = TESSERA_SOURCE_DIR "/tests/tile/emit_golden.tsv";
constexpr const char* kUpdateEnv = "TESSERA_EMIT_GOLDEN_UPDATE";
constexpr std::size_t kRankedPerTask = 64;       // the cost model's top configs, per task and arch
constexpr int kSampledPerTaskSm90 = 96;          // tile::sample draws over the sm_90a space (both backends)
constexpr int kSampledPerTaskSm80 = 32;          // and over the sm_80 space (mma_sync)
constexpr std::uint64_t kSampleSeed = 34;        // fixed: the same pairs on every regeneration
constexpr std::size_t kMinKernels = 2000;        // a truncated golden file fails
constexpr std::size_t kMismatchesShown = 20;

struct GoldenTask {
  const char* mnk;
  const char* layout;
  const char* epilogue;
};

// Small, odd and large shapes; TN and NN; every epilogue.
const std::vector<GoldenTask>& golden_tasks() {
  static const std::vector<GoldenTask> tasks = {
      {"1x4096x4096", "TN", "none"},         {"7x2112x7168", "TN", "bias"},
      {"17x129x33", "NN", "none"},           {"64x64x8192", "NN", "bias_relu"},
      {"100x5000x3000", "TN", "none"},       {"100x5000x3000", "NN", "bias"},
      {"100x5000x3001", "TN", "bias_relu"},  {"257x1000x520", "NN", "bias_gelu"},
      {"333x777x1000", "TN", "bias_gelu"},   {"333x777x1000", "NN", "none"},
      {"100x1024x18944", "TN", "bias_gelu"}, {"1024x2112x5120", "TN", "bias"},
      {"2048x2048x2048", "TN", "none"},      {"4096x4096x4096", "NN", "bias_gelu"},
      {"4096x14336x4096", "TN", "bias_relu"}, {"8192x8192x8192", "NN", "bias"},
  };
  return tasks;
}

struct Pair {
  Task task;
  Config config;
};

std::string source_hash(const Pair& p) { return content_hash(emit(p.config, p.task)); }

// The pairs to record: per task and arch, the seeds, the model's top configs
// and a fixed-seed sample; deduplicated, in (task id, config name) order.
std::vector<Pair> draw_pairs() {
  std::map<std::pair<std::string, std::string>, Pair> pairs;
  std::mt19937_64 rng(kSampleSeed);
  for (const auto& g : golden_tasks()) {
    const Task t = task_from_shape(g.mnk, g.layout, g.epilogue);
    for (const char* arch : {"sm_90a", "sm_80"}) {
      Limits limits;
      limits.arch = arch;
      std::vector<Config> configs = seeds(t, limits);
      for (const auto& r : rank_configs(t, limits, kRankedPerTask)) configs.push_back(r.config);
      const Space space = default_space(t, limits);
      const int samples = limits.arch == "sm_80" ? kSampledPerTaskSm80 : kSampledPerTaskSm90;
      for (int i = 0; i < samples; ++i)
        if (auto c = sample(space, t, limits, rng)) configs.push_back(*c);
      for (const auto& c : configs) pairs.try_emplace({t.id(), name(c)}, Pair{t, c});
    }
  }
  std::vector<Pair> out;
  for (auto& [key, p] : pairs) out.push_back(std::move(p));
  return out;
}

// "hgemm_MxNxK_LAYOUT_EPILOGUE" (the epilogue may hold an underscore).
Task task_from_id(const std::string& id) {
  const auto shape_at = id.find('_') + 1;
  const auto layout_at = id.find('_', shape_at) + 1;
  const auto epilogue_at = id.find('_', layout_at) + 1;
  return task_from_shape(id.substr(shape_at, layout_at - shape_at - 1),
                         id.substr(layout_at, epilogue_at - layout_at - 1), id.substr(epilogue_at));
}

struct GoldenRow {
  std::string task_id, config_name, hash;
};

std::vector<GoldenRow> read_golden() {
  std::ifstream in(kGoldenPath);
  std::vector<GoldenRow> rows;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    GoldenRow r;
    std::getline(fields, r.task_id, '\t');
    std::getline(fields, r.config_name, '\t');
    std::getline(fields, r.hash, '\t');
    rows.push_back(r);
  }
  return rows;
}

void write_golden(const std::vector<Pair>& pairs) {
  std::ofstream out(kGoldenPath, std::ios::trunc);
  out << "# content_hash of tile::emit(config, task) for each pair: tests/tile/emit_golden_test.cpp.\n"
         "# Regenerate only for an intentional change to the emitted source\n"
         "# (docs/tile.md, \"Emitted kernels are pinned\").\n"
         "# task\tconfig\thash\n";
  for (const auto& p : pairs) out << p.task.id() << '\t' << name(p.config) << '\t' << source_hash(p) << '\n';
}

TEST(TileEmitGolden, EveryEmittedKernelMatchesItsRecordedHash) {
  if (const char* update = std::getenv(kUpdateEnv); update && std::string(update) == "1") {
    write_golden(draw_pairs());
    std::cout << "rewrote " << kGoldenPath << "\n";
  }
  const auto rows = read_golden();
  ASSERT_GE(rows.size(), kMinKernels) << "missing or truncated " << kGoldenPath;
  std::size_t mismatches = 0;
  for (const auto& r : rows) {
    const Pair p{task_from_id(r.task_id), parse_name(r.config_name)};
    const std::string hash = source_hash(p);
    if (hash == r.hash) continue;
    if (++mismatches <= kMismatchesShown)
      ADD_FAILURE() << r.task_id << " " << r.config_name << ": emitted " << hash << ", recorded " << r.hash;
  }
  std::cout << "checked " << rows.size() << " emitted kernels, " << mismatches << " differ\n";
  RecordProperty("kernels_checked", static_cast<int>(rows.size()));
  EXPECT_EQ(mismatches, 0u) << "the emitted source changed; if intended, regenerate with " << kUpdateEnv << "=1";
}

}  // namespace
}  // namespace tessera::tile
