// The kernel text the emitter embeds (tile/detail/*.cuh and schedule.inc):
// each .cuh says in its leading /// lines where it goes, those lines never
// reach a kernel, and every embedded file does reach one (a file that no
// kernel uses would be edited to no effect).
#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"
#include "core/task.hpp"
#include "tile/config.hpp"
#include "tile/detail/emit.hpp"
#include "tile/emit.hpp"

namespace tessera::tile {
namespace {

constexpr std::string_view kPreamble = "///";
constexpr std::string_view kWgmmaSlot = "wgmma_m64nNk16";  // emit_wgmma.cpp fills it with the wrapper's name

// One kernel of each backend.
std::vector<std::string> kernels() {
  const Task t = task_from_shape("2048x2048x2048");
  return {emit(parse_name("m128x128x32_g2x2_s4p3_pa_d1_sw_es_r8_k1s_s_c1x1_none"), t),
          emit(parse_name("w128x128x64_g1x2_s6p6_pa_d1_sw_et_r8_k1s_p_c1x2_none"), t)};
}

bool emitted(std::string_view text, const std::vector<std::string>& sources) {
  for (const auto& s : sources)
    if (s.find(text) != std::string::npos) return true;
  return false;
}

TEST(TileEmitPieces, EveryCuhSaysWhereItGoesAndThatLineIsNotEmitted) {
  int cuh = 0;
  for (const auto& f : detail::kernel_files()) {
    if (!f.name.ends_with(".cuh")) continue;
    ++cuh;
    EXPECT_TRUE(f.text.starts_with(kPreamble)) << f.name;
    EXPECT_FALSE(detail::kernel_source(f.name).starts_with(kPreamble)) << f.name;
  }
  EXPECT_GT(cuh, 0);
  for (const auto& k : kernels()) EXPECT_EQ(k.find("\n///"), std::string::npos);
}

TEST(TileEmitPieces, EveryEmbeddedFileReachesAKernel) {
  const auto sources = kernels();
  for (const auto& f : detail::kernel_files()) {
    const std::string& text = detail::kernel_source(f.name);
    // The text on each side of the wgmma slot (the whole text where it has none).
    const auto slot = text.find(kWgmmaSlot);
    const std::string_view before = std::string_view(text).substr(0, slot);
    EXPECT_TRUE(emitted(before, sources)) << f.name;
    if (slot != std::string::npos) {
      EXPECT_TRUE(emitted(std::string_view(text).substr(slot + kWgmmaSlot.size()), sources)) << f.name;
    }
  }
}

TEST(TileEmitPieces, UnknownFileIsAnInternalError) {
  try {
    detail::kernel_source("no_such_piece.cuh");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), Error::Kind::internal);
  }
}

// A measurement is filed under a config only when the source is that config's
// kernel for the task as the emitter writes it now (tessera eval --rows).
TEST(TileEmit, TheConfigOfASourceIsReadBackOnlyFromItsUneditedKernel) {
  const Task t = task_from_shape("100x5120x32768");
  for (const char* n : {"w64x104x64_g1x1_s4p4_pa_d1_sw_es_r8_k3a_t_c1x1_swapab_none",
                        "m128x128x32_g2x2_s4p3_pa_d1_sw_es_r8_k1s_t_c1x1_none"}) {
    const Config c = parse_config(n);
    const std::string src = emit(c, t);
    const auto back = emitted_config(src, t);
    ASSERT_TRUE(back) << n;
    EXPECT_EQ(name(*back), n);
    std::string edited = src;
    edited.insert(edited.rfind('}'), "// tuned by hand\n");
    EXPECT_FALSE(emitted_config(edited, t)) << "an edited kernel";
    EXPECT_FALSE(emitted_config(src, task_from_shape("100x5120x16384"))) << "emitted for another task";
    EXPECT_FALSE(emitted_config(src, task_from_shape("100x5120x32768", "NN"))) << "another layout";
  }
  EXPECT_FALSE(emitted_config("// config: not_a_config\n__global__ void k() {}\n", t));
  EXPECT_FALSE(emitted_config("__global__ void k() {}\n", t));
  // The right header over another config's kernel.
  const std::string other = emit(parse_config("w64x104x64_g1x1_s4p4_pa_d1_sw_es_r8_k2a_t_c1x1_swapab_none"), t);
  std::string relabelled = other;
  const std::string from = "k2a_t_c1x1_swapab_none", to = "k3a_t_c1x1_swapab_none";
  relabelled.replace(relabelled.find(from), from.size(), to);
  EXPECT_FALSE(emitted_config(relabelled, t));
}

}  // namespace
}  // namespace tessera::tile
