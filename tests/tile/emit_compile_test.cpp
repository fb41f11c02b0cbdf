// Emitted source compiles with NVRTC for its backend's architecture, carries
// the intended instructions in its PTX, and (when cuobjdump is available) the
// wgmma path shows HGMMA in its SASS. No GPU needed.
#include <nvrtc.h>

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include <unistd.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/error.hpp"

#include "tile/cost_model.hpp"
#include "tile/emit.hpp"
#include "tile/legality.hpp"
#include "tile/space.hpp"
#include "tests/tile/new_paths.hpp"

namespace tessera::tile {
namespace {

constexpr int kSampledConfigsPerBackend = 5;  // on top of the hand-picked cases; ~1 s per compile

std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string cuda_include_dir() {
  if (const char* home = std::getenv("CUDA_HOME")) return std::string(home) + "/include";
  return "/usr/local/cuda/include";
}

struct Compiled {
  bool ok = false;
  std::string log, ptx, cubin;
};

// One NVRTC compile, the way the harness does it (ABI header injected).
Compiled nvrtc_compile(const std::string& source, const std::string& arch) {
  static const std::string header = read_file(TESSERA_SOURCE_DIR "/core/abi/tessera_abi.cuh");
  const char* headers[] = {header.c_str()};
  const char* names[] = {"tessera_abi.cuh"};
  nvrtcProgram prog = nullptr;
  Compiled out;
  if (nvrtcCreateProgram(&prog, source.c_str(), "candidate.cu", 1, headers, names) != NVRTC_SUCCESS) return out;
  const std::string arch_opt = "-arch=" + arch, inc = "-I" + cuda_include_dir();
  const char* opts[] = {arch_opt.c_str(), "-std=c++17", inc.c_str()};
  out.ok = nvrtcCompileProgram(prog, 3, opts) == NVRTC_SUCCESS;
  std::size_t n = 0;
  nvrtcGetProgramLogSize(prog, &n);
  out.log.resize(n);
  nvrtcGetProgramLog(prog, out.log.data());
  if (out.ok) {
    nvrtcGetPTXSize(prog, &n);
    out.ptx.resize(n);
    nvrtcGetPTX(prog, out.ptx.data());
    nvrtcGetCUBINSize(prog, &n);
    out.cubin.resize(n);
    nvrtcGetCUBIN(prog, out.cubin.data());
  }
  nvrtcDestroyProgram(&prog);
  return out;
}

std::string find_cuobjdump() {
  if (const char* p = std::getenv("TESSERA_CUOBJDUMP")) return p;
  for (const char* p : {"/usr/local/cuda/bin/cuobjdump", "/usr/bin/cuobjdump"})
    if (std::filesystem::exists(p)) return p;
  return {};
}

std::string run(const std::string& cmd) {
  std::string out;
  if (FILE* f = popen(cmd.c_str(), "r")) {
    char buf[4096];
    while (std::size_t n = fread(buf, 1, sizeof buf, f)) out.append(buf, n);
    pclose(f);
  }
  return out;
}

struct Case {
  const char* config;  // JSON (partial, over the defaults)
  const char* shape;
  const char* layout;
  const char* epilogue;
};

const nlohmann::json kW = {{"backend", "wgmma_tma"}, {"bk", 64}, {"stages", 4}, {"prefetch", 4},
                           {"warps_m", 2},           {"warps_n", 1}, {"bm", 128}, {"bn", 256}};

std::vector<Case> cases() {
  return {
      // wgmma_tma
      {R"({})", "4096x4096x4096", "TN", "none"},
      {R"({})", "8192x8192x8192", "NN", "none"},
      {R"({"bn":128,"warps_m":1,"persistent":true,"epilogue_store":"staged","raster":8})", "100x5000x3000", "TN", "bias_gelu"},
      {R"({"bm":64,"bn":128,"bk":32,"warps_m":1,"stages":6,"prefetch":6,"split_k":4})", "1x4096x4096", "NN", "bias_relu"},
      {R"({"bn":192,"reg_double_buffer":false})", "4096x4096x4096", "TN", "bias"},
      {R"({"bm":256,"bn":128,"stages":3,"prefetch":3,"cluster_n":2})", "4096x4096x4096", "TN", "none"},
      {R"({"warps_m":1,"warps_n":2,"epilogue_store":"staged","stages":3,"prefetch":3})", "8192x8192x8192", "NN", "none"},
      {R"({"cluster_m":2,"raster":4})", "4096x4096x4096", "NN", "bias"},
      {R"({"stages":3,"prefetch":3,"persistent":true,"epilogue_store":"tma"})", "1000x5000x3000", "TN", "bias_gelu"},
      {R"({"bm":64,"bn":128,"bk":32,"warps_m":1,"split_k":2,"epilogue_store":"tma"})", "100x5000x3000", "NN", "none"},
      {R"({"bm":64,"bn":64,"warps_m":1,"split_k":8,"split_k_mode":"parallel"})", "128x128x16384", "TN", "bias"},
      {R"({"bm":64,"bn":64,"warps_m":1,"stages":4,"prefetch":4,"split_k":64,"split_k_mode":"parallel"})", "64x128x16384",
       "TN", "none"},
      // Four-CTA clusters: A shared along N by 64x16 tiles (16-row slices), B along M (8-row slices).
      {R"({"bm":64,"bn":16,"warps_m":1,"stages":8,"prefetch":8,"cluster_n":4})", "256x512x512", "TN", "none"},
      {R"({"bm":64,"bn":32,"warps_m":1,"stages":4,"prefetch":4,"cluster_m":4})", "200x264x320", "TN", "bias"},
      // Narrow wgmma tiles (n = 8, 24), as cuBLAS runs small outputs on the H100.
      {R"({"bm":64,"bn":8,"warps_m":1,"stages":8,"prefetch":8})", "64x256x512", "TN", "none"},
      {R"({"bm":64,"bn":24,"warps_m":1,"stages":4,"prefetch":4,"epilogue_store":"staged"})", "200x264x320", "TN", "bias"},
      // Deep rings (16 and 12 stages) that wrap: 32 k-tiles per CTA.
      {R"({"bm":64,"bn":32,"warps_m":1,"stages":16,"prefetch":16,"epilogue_store":"staged"})", "4096x64x2048", "TN",
       "none"},
      // Inline producer: every load up front (K = 128), and refilled as stages free up (K = 3000, serial split-K).
      {R"({"bm":64,"bn":64,"warps_m":1,"stages":2,"prefetch":2,"inline_producer":true,"epilogue_store":"staged"})",
       "512x2048x128", "TN", "none"},
      {R"({"bm":64,"bn":128,"warps_m":1,"stages":3,"prefetch":3,"inline_producer":true,"split_k":2})", "100x5000x3000",
       "NN", "bias_relu"},
      // Stream-K (persistent): a skinny long-K shape on 28 tiles, one and two consumers, every epilogue store.
      {R"({"bn":128,"stages":6,"prefetch":6,"persistent":true,"stream_k":true})", "100x3584x18944", "TN", "none"},
      {R"({"bm":64,"bn":64,"warps_m":1,"stages":8,"prefetch":8,"persistent":true,"stream_k":true,
           "epilogue_store":"staged"})", "257x1000x4096", "TN", "bias_gelu"},
      {R"({"stages":3,"prefetch":3,"persistent":true,"stream_k":true,"epilogue_store":"tma","raster":8})",
       "1537x4096x4096", "NN", "bias"},
      // Swap-AB (C^T = B A^T): decode on 8- and 16-wide M tiles with split-K and stream-K, an M fit (104), staged.
      {R"({"bn":8,"stages":8,"prefetch":8,"swap_ab":true,"split_k":4,"split_k_mode":"parallel"})", "1x4096x14336",
       "TN", "none"},
      {R"({"bn":16,"stages":8,"prefetch":8,"swap_ab":true,"persistent":true,"stream_k":true,"epilogue_store":"staged"})",
       "7x6144x4096", "TN", "bias_relu"},
      {R"({"bm":64,"bn":104,"warps_m":1,"stages":6,"prefetch":6,"swap_ab":true,"epilogue_store":"staged"})",
       "100x3584x4096", "TN", "bias"},
      {R"({"bm":64,"bn":56,"warps_m":1,"stages":4,"prefetch":4,"swap_ab":true,"inline_producer":true})", "100x3584x4096",
       "TN", "none"},
      // Non-power-of-two tiles: 192 rows on one warpgroup per column half, 224 and 160 columns.
      {R"({"bm":192,"bn":128,"warps_m":1,"warps_n":2,"stages":4,"prefetch":4})", "1537x4096x4096", "TN", "none"},
      {R"({"bn":224,"warps_m":1,"warps_n":2,"bm":128,"stages":3,"prefetch":3,"swap_ab":true,"epilogue_store":"staged",
           "raster":8})", "1537x4096x4096", "TN", "bias_gelu"},
      {R"({"bn":192,"stages":4,"prefetch":4,"persistent":true,"epilogue_store":"tma"})", "4096x4096x4096", "TN", "none"},
      {R"({"bn":160,"stages":4,"prefetch":4,"persistent":true,"epilogue_store":"staged"})", "4096x4096x4096", "TN", "none"},
      // mma_sync
      {R"({"backend":"mma_sync"})", "4096x4096x4096", "TN", "none"},
      {R"({"backend":"mma_sync","persistent":true,"stream_k":true})", "100x5000x3001", "TN", "bias"},
      {R"({"backend":"mma_sync","bm":64,"bn":64,"persistent":true,"stream_k":true,"epilogue_store":"staged"})",
       "64x128x16384", "NN", "none"},
      {R"({"backend":"mma_sync"})", "100x5000x3001", "NN", "none"},
      {R"({"backend":"mma_sync","bm":64,"bn":256,"bk":64,"warps_m":1,"warps_n":4,"stages":4,"prefetch":2,
           "load_order":"staggered","smem_layout":"pad","epilogue_store":"staged"})", "1x4096x4096", "NN", "bias_gelu"},
      {R"({"backend":"mma_sync","split_k":3})", "100x5000x3001", "TN", "bias"},
      {R"({"backend":"mma_sync","bm":64,"bn":64,"bk":64,"warps_m":2,"warps_n":2,"stages":12,"prefetch":11})",
       "256x256x2048", "NN", "none"},
      {R"({"backend":"mma_sync","split_k":4,"split_k_mode":"parallel","bm":64,"bn":64})", "64x64x8192", "NN", "none"},
      {R"({"backend":"mma_sync","bn":256,"warps_n":4,"stages":4,"prefetch":3,"persistent":true,"raster":8})",
       "8192x8192x8192", "TN", "none"},
      {R"({"backend":"mma_sync","bm":32,"bk":64,"warps_m":1,"warps_n":4,"reg_double_buffer":false})", "100x5001x3000",
       "NN", "bias_relu"},
      {R"({"backend":"mma_sync","bm":64,"bn":64,"bk":16,"stages":2,"prefetch":1})", "64x64x64", "TN", "none"},
  };
}

void check_compiles(const Config& c, const Task& t) {
  SCOPED_TRACE(name(c) + " on " + t.id());
  const std::string src = emit(c, t);
  EXPECT_NE(src.find("tessera_hgemm(const __grid_constant__ TesseraGemmParams p)"), std::string::npos);
  EXPECT_NE(src.find("extern \"C\" __device__ const TesseraLaunchContract tessera_contract"), std::string::npos);
  EXPECT_EQ(src.find("#include <"), std::string::npos) << "only the ABI header may be included";
  const Compiled out = nvrtc_compile(src, minimum_arch(c));
  ASSERT_TRUE(out.ok) << out.log;
  if (c.backend == Backend::wgmma_tma) {
    for (const char* insn : {"wgmma.mma_async", "cp.async.bulk.tensor.2d", "mbarrier.try_wait.parity",
                             "wgmma.commit_group", "wgmma.wait_group"})
      EXPECT_NE(out.ptx.find(insn), std::string::npos) << insn;
    if (c.warps_m * c.warps_n > 1) {
      EXPECT_NE(out.ptx.find("setmaxnreg"), std::string::npos);
    }
    // ptxas serialises every wgmma of a kernel whose accumulators it sees read
    // (C7514) or written (C7515) while a wgmma may be in flight, or that it
    // must fence itself (C7519): correct, but far slower. Some epilogue
    // spellings provoke it (wgmma_epilogue.cuh, swap-AB's stores), and so did
    // wgmmas of two widths in one kernel (docs/tile.md, twelfth session).
    for (const char* note : {"C7514", "C7515", "C7519"}) EXPECT_EQ(out.log.find(note), std::string::npos) << out.log;
    EXPECT_EQ(out.ptx.find("bar.arrive") != std::string::npos, c.pingpong) << "the ping-pong order barrier";
    EXPECT_EQ(out.ptx.find("mma.sync"), std::string::npos);
    EXPECT_EQ(out.ptx.find("cp.async.bulk.tensor.2d.global.shared::cta") != std::string::npos,
              c.epilogue_store == EpilogueStore::tma);
    const bool cluster = c.cluster_m * c.cluster_n > 1;
    EXPECT_EQ(out.ptx.find(".multicast::cluster") != std::string::npos, cluster);
    EXPECT_EQ(out.ptx.find("barrier.cluster.arrive") != std::string::npos, cluster);
  } else {
    for (const char* insn : {"ldmatrix.sync.aligned", "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"})
      EXPECT_NE(out.ptx.find(insn), std::string::npos) << insn;
    const bool vec_a = t.k % 8 == 0;
    EXPECT_EQ(out.ptx.find("cp.async.cg") != std::string::npos, vec_a || (t.layout == Layout::NN && t.n % 8 == 0));
    if (t.layout == Layout::NN) {
      EXPECT_NE(out.ptx.find("ldmatrix.sync.aligned.m8n8.x4.trans"), std::string::npos);
    }
    EXPECT_EQ(out.ptx.find("wgmma"), std::string::npos);
  }
  if (c.split_k > 1 && c.split_k_mode == SplitKMode::serial) {
    EXPECT_NE(out.ptx.find("ld.acquire.gpu"), std::string::npos);
  }
  if (c.stream_k) {
    // The fix-up: 16-byte partial stores the L2 is asked to keep, read and
    // zeroed by the owner with the priority dropped again, a release arrival
    // the peers do not wait on, the owner's acquire, no fp32 atomics on the data.
    EXPECT_NE(out.ptx.find("createpolicy.fractional.L2::evict_last"), std::string::npos);
    EXPECT_NE(out.ptx.find("createpolicy.fractional.L2::evict_first"), std::string::npos);
    EXPECT_NE(out.ptx.find("st.global.cg.L2::cache_hint.v4.f32"), std::string::npos);
    EXPECT_NE(out.ptx.find("ld.global.cg.L2::cache_hint.v4.f32"), std::string::npos);
    EXPECT_NE(out.ptx.find("red.release.gpu.global.add.s32"), std::string::npos);
    EXPECT_NE(out.ptx.find("ld.acquire.gpu"), std::string::npos);
    EXPECT_EQ(out.ptx.find("red.global.add.v4.f32"), std::string::npos);
  }
  if (c.split_k > 1 && c.split_k_mode == SplitKMode::parallel) {
    // sm_90 folds four partial sums into one vector reduction; sm_80 has only scalar fp32 atomics.
    if (minimum_arch(c) == "sm_90a") {
      EXPECT_NE(out.ptx.find("red.global.add.v4.f32"), std::string::npos);
    } else {
      EXPECT_TRUE(out.ptx.find("red.global.add.f32") != std::string::npos ||
                  out.ptx.find("atom.global.add.f32") != std::string::npos);
    }
    EXPECT_EQ(out.ptx.find("ld.acquire.gpu"), std::string::npos);
    // The arrival: one acquire-release atomic (an unused helper emits no PTX).
    EXPECT_NE(out.ptx.find("atom.acq_rel.gpu.global.add.s32"), std::string::npos);
  }
}

TEST(TileEmit, HandPickedConfigsCompileForTheirBackend) {
  for (const auto& k : cases()) {
    const nlohmann::json j = nlohmann::json::parse(k.config);
    const bool mma = j.value("backend", std::string()) == "mma_sync";
    nlohmann::json full = mma ? nlohmann::json::object() : kW;
    full.update(j);
    const Task t = task_from_shape(k.shape, k.layout, k.epilogue);
    Config c = from_json(full);
    c.epilogue = t.epilogue;
    const auto legal = legality(c, t);
    ASSERT_TRUE(legal.ok) << name(c) << ": " << legal.reason;
    check_compiles(c, t);
  }
}

TEST(TileEmit, NewPathConfigsAreLegalAndCompile) {
  for (const auto& k : testing::new_path_cases()) {
    const Task t = task_from_shape(k.shape, k.layout, k.epilogue);
    for (const auto& n : k.names) {
      const Config c = parse_name(n);
      const auto legal = legality(c, t);
      ASSERT_TRUE(legal.ok) << n << " on " << t.id() << ": " << legal.reason;
      check_compiles(c, t);
    }
  }
}

// What a tune tries first, on each kind of LLM layer (decode, skinny swap-AB,
// M past a tile multiple, large with a fused epilogue): every config compiles
// with its wgmmas pipelined (check_compiles).
TEST(TileEmit, ModelTopPicksCompileUnserialised) {
  const Limits l;
  for (const char* shape : {"1x4096x14336", "192x7168x2048", "1537x4096x4096", "4096x4096x4096"}) {
    const Task t = task_from_shape(shape, "TN", shape[0] == '4' ? "bias_gelu" : "none");
    for (const auto& r : rank_configs(t, l, 8)) check_compiles(r.config, t);
  }
}

TEST(TileEmit, SampledConfigsCompile) {
  std::mt19937_64 rng(2024);
  const Task t = task_from_shape("300x1000x520", "TN", "bias");
  const Limits l;
  const Space space = default_space(t, l);
  for (const auto& part : space.parts) {
    Space one;
    one.parts.push_back(part);
    for (int i = 0; i < kSampledConfigsPerBackend; ++i) {
      const auto c = sample(one, t, l, rng);
      ASSERT_TRUE(c.has_value());
      check_compiles(*c, t);
    }
  }
}

TEST(TileEmit, IllegalConfigIsBadInput) {
  Config c;
  c.bm = 48;
  try {
    emit(c, task_from_shape("128x128x128"));
    FAIL() << "emitted an illegal config";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), Error::Kind::bad_input);
    EXPECT_NE(std::string(e.what()).find("multiples of 16"), std::string::npos) << e.what();
  }
}

TEST(TileEmit, ContractMatchesTheConfig) {
  Config c = from_json(kW);
  c.split_k = 2;
  const Task t = task_from_shape("1000x1000x4096", "NN");
  const std::string src = emit(c, t);
  EXPECT_NE(src.find("/*block_threads=*/384"), std::string::npos);
  EXPECT_NE(src.find("/*tile_m=*/128, /*tile_n=*/256"), std::string::npos);
  EXPECT_NE(src.find("/*split_k=*/2"), std::string::npos);
  EXPECT_NE(src.find("/*layout=*/1"), std::string::npos);
  EXPECT_NE(src.find("/*tma_a_box_rows=*/128, /*tma_a_box_cols=*/64"), std::string::npos);
  EXPECT_NE(src.find("/*tma_b_box_rows=*/64, /*tma_b_box_cols=*/64"), std::string::npos);  // NN: k rows x 64 n
  EXPECT_NE(src.find("/*tma_swizzle_bytes=*/128"), std::string::npos);
  EXPECT_NE(src.find("/*tma_c_box_rows=*/0, /*tma_c_box_cols=*/0"), std::string::npos);
  Config in = c;
  in.warps_m = 1, in.bm = 64, in.inline_producer = true;
  EXPECT_NE(emit(in, t).find("/*block_threads=*/128"), std::string::npos);  // no producer warpgroup
  c.epilogue_store = EpilogueStore::tma;
  c.stages = c.prefetch = 3;
  EXPECT_NE(emit(c, t).find("/*tma_c_box_rows=*/64, /*tma_c_box_cols=*/64"), std::string::npos);  // 64-row consumer tiles
  Config pp = c;  // ping-pong stores each warp's 16-row strips
  pp.bn = 128, pp.persistent = pp.pingpong = true, pp.split_k = 1;
  EXPECT_NE(emit(pp, t).find("/*tma_c_box_rows=*/16, /*tma_c_box_cols=*/64"), std::string::npos);
  EXPECT_NE(src.find(fmt::format("/*workspace_bytes=*/{}ull", workspace_bytes(c, t))), std::string::npos);
  EXPECT_EQ(workspace_bytes(c, t), 8ull * 4 * 128 * 256 * 4 + 8 * 4 * 2 * 4);  // 8x4 tiles, 2 consumers
}

// Parallel split-K: every participant's atomics are joined by a barrier
// before thread 0 reports the arrival with a gpu-scope acquire-release atomic
// (release is cumulative: it publishes what the barrier ordered before it);
// otherwise the last split can read a partial sum (a race racecheck's
// scheduling exposed on the H100).
TEST(TileEmit, ParallelSplitKJoinsBeforeReportingArrival) {
  for (const char* name : {"w64x64x64_g1x1_s6p6_pa_d1_sw_es_r0_k2a_t_c1x1_none",
                           "m64x128x32_g2x2_s4p3_pa_d1_sw_es_r0_k4a_t_c1x1_none"}) {
    const std::string src = emit(parse_name(name), task_from_shape("200x264x320"));
    const auto adds = src.find("red_add4(slot_vec<");
    const auto arrive = src.find("arrive_acq_rel(sem)");
    ASSERT_NE(adds, std::string::npos) << name;
    ASSERT_NE(arrive, std::string::npos) << name;
    ASSERT_LT(adds, arrive) << name;
    EXPECT_NE(src.substr(adds, arrive - adds).find("bar();"), std::string::npos)
        << name << ": no barrier between the adds and the arrival";
  }
}

// Swap-AB: the contract's tile is C's (tile_m on M = bn, tile_n on N = bm)
// and the tensor-map boxes follow the operands: A in bn-row boxes, B in bm.
// Stream-K: a persistent grid of one CTA per SM with split_k = k-tiles (the
// launch rule gives min(tiles x k-tiles, SMs) CTAs), and a workspace of two
// partial slots per CTA and a semaphore per shareable tile.
TEST(TileEmit, SwapAbAndStreamKContracts) {
  const Task t = task_from_shape("7x6144x4096");
  Config c = from_json(kW);
  c.warps_m = 2, c.bm = 128, c.bn = 16, c.swap_ab = true, c.stages = c.prefetch = 8;
  ASSERT_TRUE(legality(c, t).ok) << legality(c, t).reason;
  std::string src = emit(c, t);
  EXPECT_NE(src.find("/*tile_m=*/16, /*tile_n=*/128"), std::string::npos);
  EXPECT_NE(src.find("/*tma_a_box_rows=*/16, /*tma_a_box_cols=*/64"), std::string::npos);
  EXPECT_NE(src.find("/*tma_b_box_rows=*/128, /*tma_b_box_cols=*/64"), std::string::npos);
  EXPECT_NE(src.find("constexpr bool kSwapAB = true;"), std::string::npos);
  EXPECT_EQ(tiles_m(c, t), 6144 / 128) << "with swap-AB the MMA's rows walk N";
  EXPECT_EQ(tiles_n(c, t), 1);
  c.persistent = c.stream_k = true;
  src = emit(c, t);
  EXPECT_NE(src.find("/*split_k=*/64"), std::string::npos) << "4096 / 64 k-tiles";
  EXPECT_NE(src.find("/*persistent_ctas_per_sm=*/1"), std::string::npos);
  EXPECT_EQ(stream_k_partial_slots(c, t), kStreamKMaxCtas) << "48 tiles x 64 k-tiles: every CTA has work";
  EXPECT_EQ(stream_k_semaphores(c, t), 48);
  EXPECT_EQ(workspace_bytes(c, t), 1ull * kStreamKMaxCtas * 128 * 16 * 4 + 48ull * 2 * 4);  // 2 consumers' semaphores
  EXPECT_NE(src.find(fmt::format("/*workspace_bytes=*/{}ull", workspace_bytes(c, t))), std::string::npos);
  // The schedule is pasted in, as the host tests compile it.
  EXPECT_NE(src.find("TESSERA_SCHED Walk walk_begin("), std::string::npos);
}

TEST(TileEmit, WgmmaSassHasHgmma) {
  const std::string cuobjdump = find_cuobjdump();
  if (cuobjdump.empty()) GTEST_SKIP() << "cuobjdump not found (set TESSERA_CUOBJDUMP)";
  for (const char* layout : {"TN", "NN"}) {
    const Task t = task_from_shape("4096x4096x4096", layout);
    const Compiled out = nvrtc_compile(emit(from_json(kW), t), "sm_90a");
    ASSERT_TRUE(out.ok) << out.log;
    const auto path = std::filesystem::temp_directory_path() / fmt::format("tessera_tile_{}_{}.cubin", layout, ::getpid());
    std::ofstream(path, std::ios::binary) << out.cubin;
    const std::string sass = run(cuobjdump + " -sass " + path.string() + " 2>&1");
    std::filesystem::remove(path);
    EXPECT_NE(sass.find("HGMMA.64x256x16.F32"), std::string::npos) << sass.substr(0, 2000);
    EXPECT_NE(sass.find("UTMALDG"), std::string::npos);
  }
}

// tests/tile/tools/trace_patch.py (the per-CTA timeline) finds its anchors
// in every wgmma schedule, and what it makes still compiles: it exits with
// an error when the emitter has moved one, and this says so before a GPU
// session finds out.
TEST(TileTools, TracePatchAppliesToEveryWgmmaSchedule) {
  const Task t = task_from_shape("257x6144x4096");
  const auto dir = std::filesystem::temp_directory_path() / fmt::format("tessera_trace_patch_{}", ::getpid());
  std::filesystem::create_directories(dir);
  for (const char* name : {"w128x136x64_g2x1_s4p4_pa_d1_sw_es_r0_k1s_t_c1x1_swapab_none",   // tiled
                           "w128x256x64_g2x1_s3p3_pa_d1_sw_et_r8_k1s_p_c2x1_none",          // persistent, pairs
                           "w128x136x64_g2x1_s4p4_pa_d1_sw_es_r0_k1s_s_c1x1_swapab_none",   // stream-K
                           "w64x128x64_g2x1_s3p3_pa_d1_sw_es_r8_k1s_o_c1x1_none",           // ping-pong
                           "w64x64x64_g1x1_s3p3_pa_d1_sw_ed_r0_k2s_i_c1x1_none"}) {          // inline producer
    SCOPED_TRACE(name);
    const auto in = dir / "in.cu", out = dir / "out.cu";
    std::ofstream(in) << emit(parse_name(name), t);
    const std::string cmd = fmt::format("python3 {}/tests/tile/tools/trace_patch.py {} {} 2>&1", TESSERA_SOURCE_DIR,
                                        in.string(), out.string());
    ASSERT_EQ(std::system(cmd.c_str()), 0) << run(cmd);
    const std::string patched = read_file(out);
    EXPECT_NE(patched.find("trace_fixup(0)"), std::string::npos);
    const Compiled c = nvrtc_compile(patched, "sm_90a");
    ASSERT_TRUE(c.ok) << c.log.substr(0, 2000);
    EXPECT_NE(c.ptx.find("%globaltimer"), std::string::npos);
    EXPECT_NE(c.ptx.find("tessera_trace"), std::string::npos);
  }
  std::filesystem::remove_all(dir);
}

// trace_report.py reads the table tile_smoke writes (a row per CTA: its
// index, then 64 numbers; units from slot 8, fix-ups from slot 54) and
// reports and draws it. Two CTAs sharing one tile, times in ns.
TEST(TileTools, TraceReportSummarisesAndDrawsATable) {
  const auto dir = std::filesystem::temp_directory_path() / fmt::format("tessera_trace_report_{}", ::getpid());
  std::filesystem::create_directories(dir);
  const auto tsv = dir / "k0_tr.cu.trace1.tsv";
  {
    std::ofstream out(tsv);
    for (int cta = 0; cta < 2; ++cta) {
      std::vector<unsigned long long> r(64, 0);
      r[0] = 7 + cta, r[1] = 1000, r[2] = cta == 0 ? 21000 : 11000, r[3] = 1;  // SM, start, end, units
      // unit 0: start, main loop end, epilogue (owner only), k-range, peers, wait cycles, tile
      const unsigned long long u[8] = {2000, cta == 0 ? 9000ull : 10000ull, cta == 0 ? 15000ull : 0ull,
                                       cta == 0 ? 0ull : 8ull, cta == 0 ? 8ull : 16ull, 2, 3960, 5};
      std::copy(u, u + 8, r.begin() + 8);
      r[54] = 1;  // one fix-up: entered, stored or about to wait, counted in or done waiting, read
      const unsigned long long f[4] = {9100, 9300, cta == 0 ? 12000ull : 9400ull, cta == 0 ? 14000ull : 0ull};
      std::copy(f, f + 4, r.begin() + 56);
      out << cta;
      for (auto v : r) out << '\t' << v;
      out << '\n';
    }
  }
  const std::string report = run(fmt::format("python3 {}/tests/tile/tools/trace_report.py --svg {} 2>&1",
                                             TESSERA_SOURCE_DIR, tsv.string()));
  EXPECT_NE(report.find("2 CTAs on 2 SMs, span 20.00 us"), std::string::npos) << report;
  EXPECT_NE(report.find("peers {2: 2}, owners 1"), std::string::npos) << report;
  // CTA 0 owns the tile and waited 2.7 us; CTA 1 counted in after 0.1 us.
  EXPECT_NE(report.find("owners wait 2700 / 2700 / 2700"), std::string::npos) << report;
  EXPECT_NE(report.find("count in 100 / 100 / 100"), std::string::npos) << report;
  const std::string drawing = read_file(tsv.string() + ".svg");
  EXPECT_NE(drawing.find("<svg"), std::string::npos);
  EXPECT_NE(drawing.find("2 CTAs, 20.0 us"), std::string::npos);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace tessera::tile
