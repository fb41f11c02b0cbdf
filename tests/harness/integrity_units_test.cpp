// The pieces of the integrity protocol that need no GPU: the captured-call
// description the runner sends (hostile input must be refused), the ceiling
// of plausible times, the child
// process the worker runs the runner in, and the machine-state evidence.
#include <gtest/gtest.h>

#include <signal.h>
#include <unistd.h>

#include <cstring>

#include "core/ceiling.hpp"
#include "core/error.hpp"
#include "core/elf.hpp"
#include "harness/detail/machine_state.hpp"
#include "worker/child_process.hpp"
#include "worker/integrity_kernels.hpp"
#include "worker/tu_graph.hpp"
#include "worker/tu_replay.hpp"

namespace tessera {
namespace {

using worker::CapturedCall;
using worker::CapturedNode;

CapturedCall sample_call() {
  CapturedCall call;
  CapturedNode k;
  k.kernel.name = "_Z8tiled_tnPK6__halfS1_PS_iii";
  k.kernel.grid = {8, 8, 1};
  k.kernel.block = {256, 1, 1};
  k.kernel.cluster = {2, 1, 1};
  k.kernel.shared_bytes = 65536;
  k.kernel.args = {std::string("\x01\x02\x03\x04\x00\x00\x00\x00", 8), std::string("\xff\xfe\xfd\xfc", 4)};
  call.nodes.push_back(k);
  CapturedNode m;
  m.kind = CapturedNode::Kind::memset;
  m.memset = {0x7f0000001000ull, 0, 4, 1024, 3, 8192};
  call.nodes.push_back(m);
  return call;
}

TEST(CapturedCall, RoundTripsThroughJsonByteForByte) {
  const CapturedCall in = sample_call();
  const CapturedCall out = worker::captured_call_from_json(worker::to_json(in));
  ASSERT_EQ(out.nodes.size(), 2u);
  EXPECT_EQ(out.nodes[0].kernel.name, in.nodes[0].kernel.name);
  EXPECT_EQ(out.nodes[0].kernel.args, in.nodes[0].kernel.args);  // embedded zero bytes survive
  EXPECT_EQ(out.nodes[0].kernel.cluster, in.nodes[0].kernel.cluster);
  EXPECT_EQ(out.nodes[0].kernel.shared_bytes, 65536u);
  EXPECT_EQ(out.nodes[1].kind, CapturedNode::Kind::memset);
  EXPECT_EQ(out.nodes[1].memset.pitch, 8192u);
  EXPECT_EQ(out.nodes[1].memset.height, 3u);
}

TEST(CapturedCall, HostileDescriptionsAreBadInputNeverACrash) {
  auto j = worker::to_json(sample_call());
  auto expect_bad = [](const nlohmann::json& x) { EXPECT_THROW(worker::captured_call_from_json(x), Error) << x.dump(); };
  expect_bad(nlohmann::json::object());
  expect_bad({{"nodes", 3}});
  auto bad = j;
  bad["nodes"][0]["kind"] = "host_callback";
  expect_bad(bad);
  bad = j;
  bad["nodes"][0]["grid"] = {1, 2};
  expect_bad(bad);
  bad = j;
  bad["nodes"][0]["grid"] = {-1, 1, 1};
  expect_bad(bad);
  // Numbers that are not integers in range: a cast would be undefined behaviour (as the wire fuzzer
  // found for a protections report) or quietly round.
  bad = j;
  bad["nodes"][0]["grid"] = {1e300, 1, 1};
  expect_bad(bad);
  bad = j;
  bad["nodes"][0]["shared_bytes"] = 3.5;
  expect_bad(bad);
  bad = j;
  bad["nodes"][1]["width"] = 1e30;
  expect_bad(bad);
  bad = j;
  bad["nodes"][1]["value"] = -1;
  expect_bad(bad);
  bad = j;
  bad["nodes"][0]["args"] = {"zz"};
  expect_bad(bad);
  bad = j;
  bad["nodes"][0]["args"] = {"abc"};
  expect_bad(bad);
  bad = j;
  bad["nodes"][0]["args"] = {std::string(2 * 40000, 'a')};  // more argument bytes than the hardware takes
  expect_bad(bad);
  bad = j;
  bad["nodes"][1]["element_size"] = 3;
  expect_bad(bad);
  bad = j;
  bad["nodes"][0]["name"] = "";
  expect_bad(bad);
  bad = j;
  bad["nodes"] = nlohmann::json::array();
  for (int i = 0; i < 5000; ++i) bad["nodes"].push_back(j["nodes"][1]);
  expect_bad(bad);
}

TEST(Ceiling, TakesTheSlowestOfComputeMemoryAndTheFloor) {
  const Task t = task_from_shape("4096x4096x4096");
  DeviceSummary d;
  d.peak_tflops = 800;
  d.dram_gbps = 4000;
  d.floor_us = 0.9;
  const Ceiling c = ceiling_for(t, d);
  EXPECT_NEAR(c.tensor_us, 2.0 * 4096.0 * 4096 * 4096 / 800e12 * 1e6, 1e-6);  // 171.8 us
  EXPECT_NEAR(c.memory_us, 3.0 * 4096 * 4096 * 2 / 4000e9 * 1e6, 1e-6);       // 25.2 us
  EXPECT_NEAR(c.limit_us(), c.tensor_us / kTensorPeakHeadroom, 1e-9);
  EXPECT_TRUE(c.implausible(100.0));   // 1.7x the measured peak
  EXPECT_FALSE(c.implausible(160.0));  // within the headroom
  const Ceiling small = ceiling_for(task_from_shape("64x64x64"), d);
  EXPECT_NEAR(small.limit_us(), 0.9 / kFloorHeadroom, 1e-12) << "an empty kernel bounds a tiny GEMM";
  EXPECT_NE(c.describe().find("TFLOP/s"), std::string::npos);
  EXPECT_FALSE(ceiling_for(t, DeviceSummary{}).implausible(1e-3)) << "no measurement, nothing implausible";
}

// A shell script as a confined child (own session, worker limits, no environment).
ConfinedSpawn sh(const char* script) { return {"/bin/sh", {"-c", script}, {}, {}, worker_limits(), {}}; }

TEST(ChildProcess, TalksInLinesAndReportsHowItEnded) {
  worker::ChildProcess echo(sh("read line; echo \"got $line\"; read more"));
  ASSERT_TRUE(echo.send_line("hello"));
  auto line = echo.read_line(10);
  ASSERT_TRUE(line.has_value());
  EXPECT_EQ(*line, "got hello");
  EXPECT_FALSE(echo.read_line(0.05).has_value());
  EXPECT_TRUE(echo.timed_out());
  echo.kill();

  worker::ChildProcess crash(sh("kill -SEGV $$"));
  const auto e = crash.wait(10);
  EXPECT_TRUE(e.exited);
  EXPECT_EQ(e.signal, SIGSEGV);
  EXPECT_EQ(e.describe(), "killed by SIGSEGV");

  worker::ChildProcess quits(sh("exit 3"));
  EXPECT_EQ(quits.wait(10).code, 3);
}

TEST(MachineState, ForeignProcessesExcludeUsAndOurDescendants) {
  worker::ChildProcess child(sh("read x"));
  const pid_t self = ::getpid();
  const auto foreign = detail::foreign_processes({self, child.pid(), 1}, {self});
  ASSERT_EQ(foreign.size(), 1u);
  EXPECT_EQ(foreign[0], 1);
  EXPECT_EQ(detail::signal_name(SIGKILL), "SIGKILL");
  child.kill();
}

TEST(TranslationUnit, FatbinSectionSplitsIntoItsContainers) {
  // Two containers (header: magic, version, header size 16, payload size),
  // the second 8-byte aligned, then a torn third one.
  auto container = [](std::uint64_t payload_bytes, char fill) {
    std::string c(16 + payload_bytes, fill);
    const std::uint32_t magic = 0xBA55ED50;
    const std::uint16_t version = 1, header = 16;
    std::memcpy(c.data(), &magic, 4);
    std::memcpy(c.data() + 4, &version, 2);
    std::memcpy(c.data() + 6, &header, 2);
    std::memcpy(c.data() + 8, &payload_bytes, 8);
    return c;
  };
  const std::string first = container(20, 'a'), second = container(40, 'b');
  std::string section = first + std::string(4, '\0') + second;  // 36 -> padded to 40
  section += container(1000, 'c').substr(0, 30);
  const auto parts = worker::split_fatbins(section);
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(parts[0], first);
  EXPECT_EQ(parts[1], second);
  EXPECT_TRUE(worker::split_fatbins("not a fatbin at all").empty());
}

TEST(Elf, ReadSectionFindsNamedSectionsAndRefusesGarbage) {
  EXPECT_FALSE(read_section("not an elf", ".nv_fatbin").has_value());
  const std::string self = [] {
    std::FILE* f = std::fopen("/proc/self/exe", "rb");
    std::string s;
    char buf[65536];
    for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) s.append(buf, n);
    std::fclose(f);
    return s;
  }();
  const auto text = read_section(self, ".text");
  ASSERT_TRUE(text.has_value());
  EXPECT_GT(text->size(), 1000u);
  EXPECT_FALSE(read_section(self, ".no_such_section").has_value());
  EXPECT_FALSE(read_section(self.substr(0, 100), ".text").has_value()) << "a truncated image is refused";
}

}  // namespace
}  // namespace tessera
