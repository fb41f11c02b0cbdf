#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/hash.hpp"
#include "core/result.hpp"
#include "core/elf.hpp"
#include "harness/detail/ptxas_log.hpp"
#include "worker/timing.hpp"

namespace tessera {
namespace {

TEST(PtxasLog, ReadsTheEntryFunction) {
  const std::string log =
      "ptxas info    : Compiling entry function 'helper' for 'sm_90a'\n"
      "ptxas info    : Function properties for helper\n"
      "    8 bytes stack frame, 4 bytes spill stores, 4 bytes spill loads\n"
      "ptxas info    : Used 40 registers, used 1 barriers, 512 bytes smem\n"
      "ptxas info    : Compiling entry function 'tessera_hgemm' for 'sm_90a'\n"
      "ptxas info    : Function properties for tessera_hgemm\n"
      "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
      "ptxas info    : Used 168 registers, used 1 barriers, 1024 bytes smem, 400 bytes cmem[0]\n";
  auto r = detail::parse_ptxas_resources(log, "tessera_hgemm");
  EXPECT_EQ(r.registers, 168);
  EXPECT_EQ(r.static_smem_bytes, 1024);
  EXPECT_EQ(r.spill_stores, 0);
  auto first = detail::parse_ptxas_resources(log, "");
  EXPECT_EQ(first.registers, 40);
  EXPECT_EQ(first.spill_stores, 4);
}

TEST(PtxasLog, TrimKeepsHeadAndTail) {
  std::string log = "HEAD" + std::string(10000, 'x') + "TAIL";
  auto t = detail::trim_log(log, 100);
  EXPECT_LT(t.size(), 200u);
  EXPECT_EQ(t.substr(0, 4), "HEAD");
  EXPECT_EQ(t.substr(t.size() - 4), "TAIL");
  EXPECT_NE(t.find("bytes cut"), std::string::npos);
}

TEST(Elf, RejectsGarbage) {
  std::string err;
  EXPECT_FALSE(read_elf("not an elf", &err));
  EXPECT_EQ(err, "not an ELF file");
  std::string truncated = "\x7f" "ELF\x02\x01\x01";
  truncated.resize(70, '\0');
  EXPECT_FALSE(read_elf(truncated, &err));
}

TEST(Timing, SummarizeComputesRobustStatistics) {
  std::vector<double> xs;
  for (int i = 1; i <= 101; ++i) xs.push_back(double(i));
  auto s = worker::summarize(xs, "cupti_activity");
  EXPECT_EQ(s.status, "measured");
  EXPECT_EQ(s.samples, 101);
  EXPECT_DOUBLE_EQ(s.median_us, 51.0);
  EXPECT_DOUBLE_EQ(s.p10_us, 11.0);
  EXPECT_DOUBLE_EQ(s.p90_us, 91.0);
  EXPECT_NEAR(s.rel_spread, 80.0 / 51.0, 1e-12);
  EXPECT_GT(s.median_ci, 0.0);
  EXPECT_EQ(worker::summarize({}, "x").status, "failed");
}

TEST(Timing, MedianCiShrinksWithMoreSamples) {
  std::vector<double> few, many;
  for (int i = 0; i < 10; ++i) few.push_back(100.0 + (i % 5));
  for (int i = 0; i < 1000; ++i) many.push_back(100.0 + (i % 5));
  EXPECT_LT(worker::summarize(many, "x").median_ci, worker::summarize(few, "x").median_ci);
}

TEST(Result, RoundTripsThroughJson) {
  EvalResult r;
  r.status = Status::wrong_answer;
  r.reason = "3 elements outside tolerance";
  r.task = task_from_shape("64x128x256");
  r.verify.status = "failed";
  r.verify.per_trial.push_back({"integer", 1.0, 0.1, 3, 0, 0, false});
  r.cold.median_us = 12.5;
  r.baselines.push_back({"cublas_tn", "default", {}, ""});
  r.counters = {{"sm_throughput_pct", 50.0}};
  r.phase_ms = {{"compile", 210.5}, {"verify", 31.25}};
  nlohmann::json j = r;
  EvalResult back = j.get<EvalResult>();
  EXPECT_EQ(nlohmann::json(back), j);
  EXPECT_EQ(back.phase_ms, r.phase_ms);
  EXPECT_EQ(j.at("status"), "wrong_answer");
  EXPECT_EQ(j.at("schema"), "tessera.eval_result/1");
}

TEST(Result, StatusNamesRoundTrip) {
  for (auto s : {Status::ok, Status::compiled, Status::compile_error, Status::launch_error, Status::runtime_fault,
                 Status::timeout, Status::wrong_answer, Status::rejected, Status::infra_error})
    EXPECT_EQ(parse_status(to_string(s)), s);
  EXPECT_THROW(parse_status("great"), Error);
}

TEST(Hash, StableAndSensitive) {
  EXPECT_EQ(content_hash("abc"), content_hash("abc"));
  EXPECT_NE(content_hash("abc"), content_hash("abd"));
  EXPECT_NE(Hasher().add("ab").add("c").hex(), Hasher().add("a").add("bc").hex());
  EXPECT_EQ(content_hash("").size(), 32u);
}

}  // namespace
}  // namespace tessera
