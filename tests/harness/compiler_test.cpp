#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>

#include "core/candidate.hpp"
#include "harness/compiler.hpp"
#include "core/fs.hpp"
#include "harness/detail/compile_steps.hpp"
#include "core/contract.hpp"
#include "worker/integrity_kernels.hpp"
#include "worker/probes.hpp"

namespace tessera {
namespace {

std::filesystem::path fresh_cache(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() / ("tessera-test-" + name + "-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  return dir;
}

Compiler in_process(const std::string& name) { return Compiler({fresh_cache(name), 120, false, {}}); }

CompileRequest example(const char* file) {
  auto c = load_candidate(std::string(TESSERA_SOURCE_DIR) + "/examples/" + file);
  return {c.kind, c.source, "sm_90a", {}};
}

TEST(Compiler, CompilesDeviceOnlyExampleAndReadsItsContract) {
  auto comp = in_process("dev");
  auto out = comp.compile(example("hgemm_wmma.cu"));
  ASSERT_EQ(out.status, Status::ok) << out.reason << "\n" << out.info.log;
  EXPECT_EQ(out.info.compiler, "nvrtc");
  EXPECT_FALSE(out.info.cached);
  EXPECT_TRUE(std::filesystem::exists(out.artifact));
  EXPECT_EQ(out.contract.at("block_threads"), 256);
  EXPECT_EQ(out.contract.at("tile_m"), 128);
  // Resources come from ptxas's report in the log, and are -1 where the log
  // has none (seen on the H100 for compiles started from test binaries; the
  // same compile standalone there reports 95 registers). The parse itself
  // must never miss a report that is present.
  if (out.info.log.find("Used ") != std::string::npos) {
    EXPECT_GT(out.resources.registers, 0) << out.info.log;
    EXPECT_EQ(out.resources.spill_stores, 0) << out.info.log;
  } else {
    EXPECT_EQ(out.resources.registers, -1) << out.info.log;
    std::printf("note: NVRTC returned no ptxas report; log was: [%s]\n", out.info.log.c_str());
  }
}

TEST(Compiler, SecondCompileIsACacheHit) {
  auto comp = in_process("cache");
  auto req = example("hgemm_naive.cu");
  auto first = comp.compile(req);
  ASSERT_EQ(first.status, Status::ok) << first.reason;
  auto second = comp.compile(req);
  EXPECT_TRUE(second.info.cached);
  EXPECT_EQ(second.info.key, first.info.key);
  EXPECT_EQ(second.contract, first.contract);
  EXPECT_LT(second.info.ms, first.info.ms);
}

TEST(Compiler, KeyDependsOnSourceArchAndOptions) {
  auto comp = in_process("key");
  auto req = example("hgemm_naive.cu");
  const auto k = comp.key(req);
  auto other = req;
  other.arch = "sm_80";
  EXPECT_NE(comp.key(other), k);
  other = req;
  other.source += "\n// comment";
  EXPECT_NE(comp.key(other), k);
  other = req;
  other.extra_options = {"-DX=1"};
  EXPECT_NE(comp.key(other), k);
}

TEST(Compiler, MissingContractIsABadAbiCompileError) {
  auto comp = in_process("abi");
  CompileRequest req{CandidateKind::device_only,
                     "#include \"tessera_abi.cuh\"\nextern \"C\" __global__ void tessera_hgemm(TesseraGemmParams p) {}\n",
                     "sm_90a", {}};
  auto out = comp.compile(req);
  EXPECT_EQ(out.status, Status::compile_error);
  EXPECT_NE(out.reason.find("tessera_contract"), std::string::npos) << out.reason;
}

TEST(Compiler, SyntaxErrorKeepsTheLog) {
  auto comp = in_process("syntax");
  CompileRequest req{CandidateKind::device_only, "extern \"C\" __global__ void tessera_hgemm() { nope; }", "sm_90a", {}};
  auto out = comp.compile(req);
  EXPECT_EQ(out.status, Status::compile_error);
  EXPECT_NE(out.info.log.find("nope"), std::string::npos) << out.info.log;
}

TEST(Compiler, TranslationUnitExampleBuildsAndPassesPolicy) {
  auto comp = in_process("tu");
  auto out = comp.compile(example("hgemm_tu.cu"));
  ASSERT_EQ(out.status, Status::ok) << out.reason << "\n" << out.info.log;
  EXPECT_EQ(out.info.compiler, "nvcc");
  EXPECT_TRUE(detail::tu_binary_policy(read_file(out.artifact)).empty());
}

TEST(Compiler, SourcePolicyNamesTheViolation) {
  EXPECT_NE(detail::tu_source_policy("#include <cublasLt.h>\n").find("cublas"), std::string::npos);
  EXPECT_NE(detail::tu_source_policy("#include \"cudnn.h\"\n").find("cudnn"), std::string::npos);
  EXPECT_NE(detail::tu_source_policy("void* h = dlopen(\"x\", 0);").find("dlopen"), std::string::npos);
  EXPECT_TRUE(detail::tu_source_policy("// a comment about cuBLAS is fine\nint x;").empty());
  // Other ways to find a library's code at run time.
  EXPECT_NE(detail::tu_source_policy("dl_iterate_phdr(cb, nullptr);").find("dl_iterate_phdr"), std::string::npos);
  EXPECT_NE(detail::tu_source_policy("cuGetProcAddress(\"cuModuleLoad\", &p, 12000, 0, 0);").find("cuGetProcAddress"),
            std::string::npos);
  // Prefix families: every spelling of the driver's entry points and export tables.
  EXPECT_NE(detail::tu_source_policy("cudaGetDriverEntryPoint_ptsz(\"x\", &p, 0);").find("cudaGetDriverEntryPoint_ptsz"),
            std::string::npos);
  EXPECT_NE(detail::tu_source_policy("cudaGetExportTable(&t, &id);").find("cudaGetExportTable"), std::string::npos);
  EXPECT_NE(detail::tu_source_policy("__cudaRegisterFunction(h, f, n, n, -1, 0, 0, 0, 0, 0);").find("__cudaRegister"),
            std::string::npos);
  EXPECT_NE(detail::tu_source_policy("int fd = socket(AF_INET, SOCK_STREAM, 0);").find("socket"), std::string::npos);
  EXPECT_NE(detail::tu_source_policy("execvp(argv[0], argv);").find("execvp"), std::string::npos);
  // The candidate's own names that merely start with such a word are fine.
  EXPECT_TRUE(detail::tu_source_policy("void execute_tile(int); void kill_switch(); int connect_tiles(int);\n"
                                       "execute_tile(1); kill_switch(); connect_tiles(2);").empty());
  // The rules are part of the compile cache's key.
  EXPECT_NE(detail::policy_fingerprint().find("dl_iterate_phdr"), std::string::npos);
}

TEST(Compiler, ReservedTimerKernelNamesAreRejectedWhereverTheyShow) {
  using detail::reserved_name_policy;
  // The list the compiler checks is the timer's.
  EXPECT_STREQ(detail::kHarnessKernelNames[0], worker::kFlushKernelName);
  EXPECT_STREQ(detail::kHarnessKernelNames[1], worker::kProbeKernelName);
  EXPECT_STREQ(detail::kHarnessKernelPrefix, worker::kHarnessKernelPrefix);
  // The prefix of the harness's integrity kernels, in the source, the entry list or the module.
  EXPECT_NE(reserved_name_policy("__global__ void tessera_harness_check2() {}", "", "").find("tessera_harness_check2"),
            std::string::npos);
  EXPECT_NE(reserved_name_policy("", "ptxas info    : Compiling entry function 'tessera_harness_x' for 'sm_90a'", "")
                .find("tessera_harness_x"),
            std::string::npos);
  EXPECT_TRUE(reserved_name_policy("int tessera_harnessed = 0;", "", "").empty());
  EXPECT_NE(reserved_name_policy("__global__ void tessera_clock_probe() {}", "", "").find("tessera_clock_probe"),
            std::string::npos);
  EXPECT_NE(reserved_name_policy("", "ptxas info    : Compiling entry function 'tessera_l2_flush' for 'sm_90a'", "")
                .find("tessera_l2_flush"),
            std::string::npos);
  EXPECT_TRUE(reserved_name_policy("tessera_l2_flushed_rows = 0; // tessera_hgemm", "", "").empty());
  EXPECT_TRUE(reserved_name_policy("", "", "not an ELF image").empty());
  // A device-only kernel with the name, pasted by the preprocessor: the
  // cubin's symbol table (and the ptxas log) still show it.
  auto comp = in_process("reserved");
  auto req = example("hgemm_wmma.cu");
  req.source += "\n#define TESSERA_PASTE(a, b) a##b\nextern \"C\" __global__ void TESSERA_PASTE(tessera_clock, _probe)() {}\n";
  const auto out = comp.compile(req);
  EXPECT_EQ(out.status, Status::rejected) << out.reason;
  EXPECT_NE(out.reason.find("reserved for the harness's timer kernels"), std::string::npos) << out.reason;
}

TEST(Contract, RejectsImpossibleContracts) {
  LaunchContract c{};
  c.abi_version = 1;
  c.block_threads = 256;
  c.tile_m = c.tile_n = 64;
  c.split_k = 1;
  c.cluster_x = c.cluster_y = 1;
  EXPECT_EQ(check_contract(c), "");
  auto bad = c;
  bad.block_threads = 100;
  EXPECT_NE(check_contract(bad), "");
  bad = c;
  bad.abi_version = 2;
  EXPECT_NE(check_contract(bad), "");
  bad = c;
  bad.cluster_x = 4;
  bad.cluster_y = 4;
  EXPECT_NE(check_contract(bad), "");
  bad = c;
  bad.tma_swizzle_bytes = 48;
  EXPECT_NE(check_contract(bad), "");
  EXPECT_EQ(contract_to_json(contract_from_json(contract_to_json(c))),
            contract_to_json(c));
}

}  // namespace
}  // namespace tessera
