// The compile cache trusts an entry only while its artifact is the entry's
// own file with the content hash recorded when it was compiled: a tampered,
// truncated or redirected artifact is a miss, compiled again, with a log line.
#include <gtest/gtest.h>

#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include "core/candidate.hpp"
#include "harness/compiler.hpp"
#include "confine/confine.hpp"
#include "core/fs.hpp"
#include "core/hash.hpp"

namespace tessera {
namespace {

// Captures what the default logger writes for the length of a test.
class LogCapture {
public:
  LogCapture() : sink_(std::make_shared<spdlog::sinks::ostream_sink_mt>(text_)) {
    spdlog::default_logger()->sinks().push_back(sink_);
  }
  ~LogCapture() {
    auto& sinks = spdlog::default_logger()->sinks();
    sinks.erase(std::remove(sinks.begin(), sinks.end(), sink_), sinks.end());
  }
  std::string text() const { return text_.str(); }

private:
  std::ostringstream text_;
  std::shared_ptr<spdlog::sinks::ostream_sink_mt> sink_;
};

class CompileCacheTest : public ::testing::Test {
protected:
  void SetUp() override {
    dir_.emplace(std::filesystem::temp_directory_path(), "tessera-cache-test-");
    const auto c = load_candidate(std::string(TESSERA_SOURCE_DIR) + "/examples/hgemm_naive.cu");
    request_ = {c.kind, c.source, "sm_90a", {}};
  }
  Compiler compiler() const { return Compiler({dir_->path(), 120, false, {}}); }
  std::filesystem::path meta(const CompileOutput& out) const { return dir_->path() / (out.info.key + ".json"); }

  std::optional<ScratchDir> dir_;
  CompileRequest request_;
};

// A pool compiles ahead on one evaluator's compiler while each GPU's
// evaluator compiles what it measures next: callers that ask for an entry
// being compiled wait for that compile instead of starting their own.
TEST_F(CompileCacheTest, ConcurrentCallersOfOneEntryShareOneCompile) {
  constexpr int kCallers = 6;
  std::vector<Compiler> compilers;  // one per caller, as one per evaluator
  for (int i = 0; i < kCallers; ++i) compilers.push_back(compiler());
  std::vector<CompileOutput> outs(kCallers);
  const long long before = compiles_run();
  {
    std::vector<std::jthread> callers;
    for (int i = 0; i < kCallers; ++i) callers.emplace_back([&, i] { outs[i] = compilers[i].compile(request_); });
  }
  EXPECT_EQ(compiles_run() - before, 1);
  for (const auto& out : outs) {
    ASSERT_EQ(out.status, Status::ok) << out.reason;
    EXPECT_EQ(out.artifact, outs.front().artifact);
    EXPECT_EQ(out.artifact_hash, outs.front().artifact_hash);
  }
  EXPECT_EQ(compiles_run() - before, 1);
  EXPECT_TRUE(compilers.front().compile(request_).info.cached);  // and then it is in the cache
}

TEST_F(CompileCacheTest, EntryRecordsItsArtifactsContentHash) {
  auto c = compiler();
  const auto out = c.compile(request_);
  ASSERT_EQ(out.status, Status::ok) << out.reason;
  const auto entry = nlohmann::json::parse(read_file(meta(out)));
  EXPECT_EQ(entry.at("artifact_hash"), content_hash(read_file(out.artifact)));
  EXPECT_TRUE(c.compile(request_).info.cached);
}

TEST_F(CompileCacheTest, TamperedOrTruncatedArtifactIsCompiledAgain) {
  auto c = compiler();
  const auto first = c.compile(request_);
  ASSERT_EQ(first.status, Status::ok) << first.reason;
  const std::string good = read_file(first.artifact);
  for (const std::string& bad : {good.substr(0, good.size() / 2), std::string(good).replace(good.size() / 2, 4, "EVIL")}) {
    atomic_write_file(first.artifact, bad);
    LogCapture log;
    const auto again = c.compile(request_);
    ASSERT_EQ(again.status, Status::ok) << again.reason;
    EXPECT_FALSE(again.info.cached) << "a changed artifact must not be served";
    EXPECT_EQ(read_file(again.artifact), good) << "recompiled and rewritten";
    EXPECT_NE(log.text().find("does not match the recorded content hash"), std::string::npos) << log.text();
  }
  EXPECT_TRUE(c.compile(request_).info.cached);
}

TEST_F(CompileCacheTest, EntryPointingElsewhereOrWithoutHashIsAMiss) {
  auto c = compiler();
  const auto first = c.compile(request_);
  ASSERT_EQ(first.status, Status::ok) << first.reason;
  // An entry may not send the worker to another file, even one whose hash it knows.
  const auto elsewhere = dir_->path() / "other.cubin";
  std::filesystem::copy_file(first.artifact, elsewhere);
  auto entry = nlohmann::json::parse(read_file(meta(first)));
  entry["artifact"] = elsewhere.string();
  atomic_write_file(meta(first), entry.dump());
  EXPECT_FALSE(c.compile(request_).info.cached);
  entry = nlohmann::json::parse(read_file(meta(first)));
  entry.erase("artifact_hash");  // as an older tessera wrote it
  atomic_write_file(meta(first), entry.dump());
  EXPECT_FALSE(c.compile(request_).info.cached);
  EXPECT_TRUE(c.compile(request_).info.cached) << "and the rewritten entry is trusted again";
}

}  // namespace
}  // namespace tessera
