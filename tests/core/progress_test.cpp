#include <cstdio>
#include <string>

#include <gtest/gtest.h>

#include "core/progress.hpp"
#include "tests/testing.hpp"

namespace tessera {
namespace {

using ::tessera::testing::contents_and_close;

// The bar as the user sees it, `filled` characters of kProgressBarWidth.
std::string drawn(int filled) {
  std::string inside(filled, '#');
  inside.resize(kProgressBarWidth, '.');
  return std::string("[") + inside + "]";
}

TEST(ProgressBar, TheBarFillsItsShareOfTheWidth) {
  EXPECT_EQ(progress_bar(0), drawn(0));
  EXPECT_EQ(progress_bar(0.5), drawn(kProgressBarWidth / 2));
  EXPECT_EQ(progress_bar(1.7), drawn(kProgressBarWidth));  // clamped
  EXPECT_EQ(progress_bar(-1), drawn(0));
}

// In a file (a log, CI): tagged plain lines, the first update at once and the
// next ones held back for the interval; the last state and messages always.
TEST(ProgressBar, PlainLinesWhenNotATerminal) {
  std::FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  {
    ProgressBar bar("tune", f);
    EXPECT_FALSE(bar.on_terminal());
    bar.update(0.25, "1/4 configs");
    bar.update(0.5, "2/4 configs");  // within the interval: not written
    bar.message("the worker restarted");
    bar.clear();  // nothing to erase in a file
    bar.finish(1.0, "4/4 configs");
  }
  EXPECT_EQ(contents_and_close(f), "tune: 1/4 configs\ntune: the worker restarted\ntune: 4/4 configs\n");
}

}  // namespace
}  // namespace tessera
