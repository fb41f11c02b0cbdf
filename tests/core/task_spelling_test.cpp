// Every spelling of a task that tessera prints is read back as that task:
// the shape, and the id that reports, the search and the environment print.
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "core/task.hpp"

namespace tessera {
namespace {

TEST(TaskSpelling, TheIdReadsBackAsTheSameTask) {
  for (const auto& t : {task_from_shape("512x256x128"), task_from_shape("64x64x64", "NN", "bias_relu"),
                        task_from_shape("4096x4096x4096", "TN", "bias_gelu")}) {
    EXPECT_EQ(task_from_shape(t.id()).id(), t.id()) << t.id();
    EXPECT_EQ(task_from_shape(t.shape()).shape(), t.shape());
  }
  EXPECT_EQ(task_from_shape("hgemm_512x512x512").id(), "hgemm_512x512x512_TN_none") << "layout and epilogue left off";
  EXPECT_EQ(task_from_shape("512x512x512_NN").id(), "hgemm_512x512x512_NN_none") << "op left off";
}

TEST(TaskSpelling, BadOrContradictorySpellingsAreClearErrors) {
  EXPECT_THROW(task_from_shape("hgemm_512x512_TN_none"), Error);
  EXPECT_THROW(task_from_shape("hgemm_512x512x512_XY_none"), Error);
  EXPECT_THROW(task_from_shape("hgemm_512x512x512_TN_swish"), Error);
  EXPECT_THROW(task_from_shape("sgemm_512x512x512_TN_none"), Error) << "unsupported op";
  EXPECT_THROW(task_from_shape("hgemm_512x512x512_NN_none", "TN", "bias"), Error) << "the id's epilogue disagrees";
  try {
    task_from_shape("hgemm_12x");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("task id"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tessera
