// Bring-your-own-kernel build options: include folders and nvcc flags travel
// as directives in the source, are policed by an allow-list, reach nvcc, key
// the compile cache (headers included) and are recorded in the result.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "harness/candidate_build.hpp"
#include "harness/compiler.hpp"
#include "core/error.hpp"
#include "core/fs.hpp"
#include "harness/detail/build_directives.hpp"
#include "harness/detail/compile_steps.hpp"

namespace tessera {
namespace {

namespace fs = std::filesystem;

fs::path temp_dir(const std::string& name) {
  auto d = fs::temp_directory_path() / ("tessera-build-" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

void write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text;
}

// A TU whose result depends on a header from the include folder and a -D flag.
constexpr const char* kTu = R"(#include <cuda_runtime.h>
#include "tessera_abi.cuh"
#include "scale.cuh"
#ifndef TESSERA_TEST_FLAG
#error "the -D flag did not reach nvcc"
#endif
__global__ void fill(__half* c, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) c[i] = __float2half(kScale); }
extern "C" int tessera_launch(const TesseraGemmParams* p, cudaStream_t s) {
  fill<<<(p->M * p->N + 255) / 256, 256, 0, s>>>(p->C, p->M * p->N);
  return 0;
}
)";

// A folder with the kernel and its header, and the options that build it.
struct Project {
  fs::path dir;
  BuildOptions build;
};
Project project(const std::string& name) {
  Project p{temp_dir(name), {}};
  write(p.dir / "inc" / "scale.cuh", "constexpr float kScale = 2.0f;\n");
  write(p.dir / "k.cu", kTu);
  p.build.include_dirs = {(p.dir / "inc").string()};
  p.build.nvcc_flags = {"-DTESSERA_TEST_FLAG"};
  return p;
}

TEST(BuildOptions, DirectivesRoundTrip) {
  const std::vector<std::string> args = {"-I/opt/x", "-DFOO=1", "--use_fast_math"};
  const std::string src = detail::nvcc_directive_lines(args) + "int x;\n  // tessera-nvcc:   -UBAR  \n";
  EXPECT_EQ(detail::nvcc_directives(src), (std::vector<std::string>{"-I/opt/x", "-DFOO=1", "--use_fast_math", "-UBAR"}));
  EXPECT_TRUE(detail::nvcc_directives("int x; // not a directive\n").empty());
}

TEST(BuildOptions, AllowListRejectsLinkingAndLoading) {
  EXPECT_EQ(detail::nvcc_args_policy({"-I/usr/include/cutlass", "-DX=1", "-O2", "-std=c++20",
                                      "--expt-relaxed-constexpr", "--default-stream=per-thread", "-Xptxas=-v"}),
            "");
  for (const char* bad : {"-lcublas", "-L/usr/lib", "-Xlinker=--whole-archive", "-Xcompiler=-fplugin=x.so",
                          "-include=evil.h", "-ccbin=/tmp/gcc", "-Irelative/path", "--run"})
    EXPECT_NE(detail::nvcc_args_policy({bad}).find("not allowed"), std::string::npos) << bad;
  EXPECT_NE(detail::nvcc_args_policy({"-DHDR=<cublas_v2.h>"}).find("forbidden library"), std::string::npos);
}

TEST(BuildOptions, LoadAddsDirectivesAndChecksInput) {
  const auto [dir, b] = project("load");
  const Candidate c = load_candidate_with(dir / "k.cu", "auto", b);
  EXPECT_EQ(c.kind, CandidateKind::translation_unit);
  EXPECT_EQ(detail::nvcc_directives(c.source),
            (std::vector<std::string>{"-I" + (dir / "inc").string(), "-DTESSERA_TEST_FLAG"}));
  EXPECT_NE(c.source.find("#line 1 \"k.cu\""), std::string::npos);

  BuildOptions missing = b;
  missing.include_dirs = {(dir / "nope").string()};
  EXPECT_THROW(load_candidate_with(dir / "k.cu", "auto", missing), Error);
  BuildOptions linking = b;
  linking.nvcc_flags = {"-lcublas"};
  EXPECT_THROW(load_candidate_with(dir / "k.cu", "auto", linking), Error);
  // Device-only candidates are compiled by NVRTC: nvcc options cannot apply.
  EXPECT_THROW(load_candidate_with(std::string(TESSERA_SOURCE_DIR) + "/examples/hgemm_naive.cu", "auto", b), Error);
}

TEST(BuildOptions, ReachNvccKeyTheCacheAndAreRecorded) {
  const auto [dir, b] = project("compile");
  const Candidate c = load_candidate_with(dir / "k.cu", "auto", b);
  Compiler comp({dir / "cache", 300, false, {}});
  const CompileRequest req{c.kind, c.source, "sm_90a", {}};
  const auto out = comp.compile(req);
  ASSERT_EQ(out.status, Status::ok) << out.reason << "\n" << out.info.log;
  EXPECT_EQ(out.info.options, detail::nvcc_directives(c.source));
  EXPECT_EQ(nlohmann::json(out.info).at("options").size(), 2u);
  const auto again = comp.compile(req);
  EXPECT_TRUE(again.info.cached);
  EXPECT_EQ(again.info.options, out.info.options);

  // Without the flag the source's #error fires: the flag is what reached nvcc.
  BuildOptions no_flag = b;
  no_flag.nvcc_flags.clear();
  const Candidate bare = load_candidate_with(dir / "k.cu", "auto", no_flag);
  const auto failed = comp.compile({bare.kind, bare.source, "sm_90a", {}});
  EXPECT_EQ(failed.status, Status::compile_error);
  EXPECT_NE(failed.info.log.find("did not reach nvcc"), std::string::npos) << failed.info.log;
}

TEST(BuildOptions, KeyFollowsTheHeadersOfIncludeFolders) {
  const auto dir = project("key").dir;
  const std::string src = detail::nvcc_directive_lines({"-I" + (dir / "inc").string()}) + kTu;
  Compiler comp({dir / "cache", 300, false, {}});
  const CompileRequest req{CandidateKind::translation_unit, src, "sm_90a", {}};
  const std::string before = comp.key(req);
  EXPECT_EQ(comp.key(req), before);
  // Another process (a new sweep) sees the changed header: the fingerprint is per process per folder.
  const std::string fingerprint = detail::include_fingerprint(src);
  EXPECT_NE(fingerprint.find((dir / "inc").string()), std::string::npos);
  EXPECT_NE(fingerprint.find(":1:"), std::string::npos) << "one file under the folder: " << fingerprint;
  EXPECT_EQ(detail::include_fingerprint(kTu), "");
}

TEST(BuildOptions, TorchFileWithoutEntryGetsAHint) {
  try {
    load_candidate_with(std::string(TESSERA_SOURCE_DIR) + "/examples/torch_ext_hgemm.cu", "auto", {});
    FAIL() << "expected a bad_input error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), Error::Kind::bad_input);
    EXPECT_NE(std::string(e.what()).find("--torch-entry"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tessera
