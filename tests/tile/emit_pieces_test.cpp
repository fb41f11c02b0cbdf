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

}  // namespace
}  // namespace tessera::tile
