#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "tile/config.hpp"

namespace tessera::tile {
namespace {

Config unusual() {
  Config c;
  c.backend = Backend::wgmma_tma;
  c.bm = 64, c.bn = 192, c.bk = 64, c.warps_m = 1, c.warps_n = 2, c.stages = 5, c.prefetch = 5;
  c.load_order = LoadOrder::staggered;
  c.reg_double_buffer = false;
  c.smem_layout = SmemLayout::pad;
  c.epilogue_store = EpilogueStore::staged;
  c.raster = 16, c.split_k = 4, c.persistent = true, c.cluster_m = 2, c.cluster_n = 1;
  c.split_k_mode = SplitKMode::parallel;
  c.epilogue = Epilogue::bias_gelu;
  return c;
}

TEST(TileConfig, JsonRoundTrip) {
  for (const Config& c : {Config{}, unusual()}) {
    const auto j = to_json(c);
    EXPECT_EQ(from_json(j), c) << j.dump();
    EXPECT_EQ(from_json(nlohmann::json::parse(j.dump())), c);
  }
}

TEST(TileConfig, NameRoundTripAndDistinct) {
  const Config a{}, b = unusual();
  Config t = b;
  t.epilogue_store = EpilogueStore::tma;
  EXPECT_EQ(parse_name(name(t)), t);
  EXPECT_NE(name(t), name(b));
  EXPECT_EQ(from_json(to_json(t)), t);
  EXPECT_EQ(parse_name(name(a)), a);
  EXPECT_EQ(parse_name(name(b)), b);
  EXPECT_NE(name(a), name(b));
  EXPECT_EQ(name(b), "w64x192x64_g1x2_s5p5_st_d0_pd_es_r16_k4a_p_c2x1_bias_gelu");
  // The inline producer takes the schedule letter 'i' (it excludes persistent).
  Config in = b;
  in.persistent = false;
  in.inline_producer = true;
  EXPECT_EQ(name(in), "w64x192x64_g1x2_s5p5_st_d0_pd_es_r16_k4a_i_c2x1_bias_gelu");
  EXPECT_EQ(parse_name(name(in)), in);
  EXPECT_EQ(from_json(to_json(in)), in);
  in.inline_producer = false;
  EXPECT_NE(name(in), name(b));
  EXPECT_THROW(parse_name("w64x192x64_g1x2_s5p5_st_d0_pd_es_r16_k4a_q_c2x1_none"), Error);
}

// A name without its epilogue (the likeliest slip when copying one from a
// table into an A/B plan) is refused with the fix; other bad names are not told to add one.
TEST(TileConfig, ANameWithoutItsEpilogueIsToldToEndWithOne) {
  const std::string bare = "w128x256x64_g2x1_s3p3_pa_d0_sw_et_r8_k1s_p_c2x1";
  try {
    parse_name(bare);
    FAIL() << "parsed a name without an epilogue";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("it names no epilogue; end it with _none, _bias, _bias_relu or _bias_gelu, as in " +
                                         bare + "_none"),
              std::string::npos)
        << e.what();
  }
  for (const std::string other : {"w64x192x64_g1x2_s5p5_st_d0_pd_es_r16_k4a_q_c2x1_none", "nonsense", ""}) {
    try {
      parse_name(other);
      FAIL() << "parsed '" << other << "'";
    } catch (const Error& e) {
      EXPECT_EQ(std::string(e.what()).find("epilogue"), std::string::npos) << e.what();
    }
  }
}

TEST(TileConfig, StreamKAndSwapAbNames) {
  Config c = unusual();
  c.split_k = 1, c.split_k_mode = SplitKMode::serial;
  c.stream_k = true;  // schedule letter 's' (persistent)
  EXPECT_EQ(name(c), "w64x192x64_g1x2_s5p5_st_d0_pd_es_r16_k1s_s_c2x1_bias_gelu");
  EXPECT_EQ(parse_name(name(c)), c);
  EXPECT_EQ(from_json(to_json(c)), c);
  c.swap_ab = true;  // "swapab_" before the epilogue
  EXPECT_EQ(name(c), "w64x192x64_g1x2_s5p5_st_d0_pd_es_r16_k1s_s_c2x1_swapab_bias_gelu");
  EXPECT_EQ(parse_name(name(c)), c);
  EXPECT_EQ(from_json(to_json(c)), c);
  c.stream_k = false;
  EXPECT_EQ(parse_name(name(c)), c);
  EXPECT_NE(name(c), "w64x192x64_g1x2_s5p5_st_d0_pd_es_r16_k1s_p_c2x1_bias_gelu");
  // Stream-K is a persistent schedule: a name or JSON that says otherwise is bad input.
  EXPECT_THROW(from_json(nlohmann::json{{"stream_k", true}, {"persistent", false}}), Error);
  EXPECT_THROW(parse_name("w64x192x64_g1x2_s5p5_st_d0_pd_es_r16_k1s_s_c2x1_swapab_"), Error);
  EXPECT_THROW(parse_name("w64x192x64_g1x2_s5p5_st_d0_pd_es_r16_k1s_s_c2x1_swapab_swapab_none"), Error);
}

TEST(TileConfig, PingPongIsAPersistentSchedule) {
  Config c = unusual();
  c.split_k = 1, c.split_k_mode = SplitKMode::serial;
  c.pingpong = true;  // schedule letter 'o' in place of 'p'
  EXPECT_EQ(name(c), "w64x192x64_g1x2_s5p5_st_d0_pd_es_r16_k1s_o_c2x1_bias_gelu");
  EXPECT_EQ(parse_name(name(c)), c);
  EXPECT_EQ(from_json(to_json(c)), c);
  EXPECT_EQ(to_json(c).at("pingpong"), true);
  c.pingpong = false;
  EXPECT_NE(parse_name("w64x192x64_g1x2_s5p5_st_d0_pd_es_r16_k1s_o_c2x1_bias_gelu"), c);
  // Ping-pong walks the persistent schedule: without it, or with stream-K, it is bad input.
  EXPECT_THROW(from_json(nlohmann::json{{"pingpong", true}, {"persistent", false}}), Error);
  EXPECT_THROW(from_json(nlohmann::json{{"pingpong", true}, {"persistent", true}, {"stream_k", true}}), Error);
  EXPECT_THROW(from_json(nlohmann::json{{"pingpong", 1}}), Error);
}

TEST(TileConfig, PartialJsonMutatesBase) {
  const Config base = unusual();
  const Config c = from_json(nlohmann::json{{"bn", 128}, {"persistent", false}}, base);
  EXPECT_EQ(c.bn, 128);
  EXPECT_FALSE(c.persistent);
  EXPECT_EQ(c.stages, base.stages);
  EXPECT_EQ(c.backend, base.backend);
}

TEST(TileConfig, StrictParsingRejectsBadInput) {
  const auto bad = [](const nlohmann::json& j) {
    try {
      from_json(j);
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), Error::Kind::bad_input) << e.what();
      return std::string(e.what());
    }
    ADD_FAILURE() << "accepted " << j.dump();
    return std::string();
  };
  EXPECT_NE(bad({{"bm", 128}, {"tile_m", 64}}).find("tile_m"), std::string::npos);
  EXPECT_NE(bad({{"bm", "128"}}).find("bm"), std::string::npos);
  EXPECT_NE(bad({{"bm", 1.5}}).find("bm"), std::string::npos);
  EXPECT_NE(bad({{"bm", -64}}).find("bm"), std::string::npos);
  EXPECT_NE(bad({{"backend", "tensor_magic"}}).find("backend"), std::string::npos);
  EXPECT_NE(bad({{"persistent", 1}}).find("persistent"), std::string::npos);
  EXPECT_NE(bad({{"split_k_mode", "tree"}}).find("split_k_mode"), std::string::npos);
  EXPECT_NE(bad({{"epilogue", "bias_swish"}}).find("bias_swish"), std::string::npos);
  EXPECT_NE(bad({{"persistent", true}, {"inline_producer", true}}).find("exclusive"), std::string::npos);
  bad(nlohmann::json::array({1, 2}));
}

TEST(TileConfig, ParseConfigAcceptsJsonOrName) {
  const Config c = unusual();
  EXPECT_EQ(parse_config(to_json(c).dump()), c);
  EXPECT_EQ(parse_config(name(c)), c);
  for (const char* text : {"", "{", "{\"bm\":}", "w128", "w64x192x64_g1x2_s5p5_st_d0_pd_es_r16_k4s_p_c2x1_bias_gelu_extra",
                           "x64x192x64_g1x2_s5p5_st_d0_pd_es_r16_k4s_p_c2x1_none",
                           "w64x192x64_g1x2_s5p5_zz_d0_pd_es_r16_k4s_p_c2x1_none"}) {
    EXPECT_THROW(parse_config(text), Error) << text;
  }
}

TEST(TileConfig, ThreadsFollowTheBackend) {
  Config c;
  c.warps_m = 2, c.warps_n = 4;
  EXPECT_EQ(c.threads(), 256);
  c.backend = Backend::wgmma_tma;
  c.warps_m = 2, c.warps_n = 1;
  EXPECT_EQ(c.threads(), 384);  // producer + 2 consumer warpgroups
  c.warps_m = 1;
  c.inline_producer = true;
  EXPECT_EQ(c.threads(), 128);  // the consumer issues its own loads
}

}  // namespace
}  // namespace tessera::tile
