// core/fs.hpp's check on an output file's name: a file of another kind given
// to an output option is refused, naming the option, the file and what it
// should be, before anything is written.
#include <gtest/gtest.h>

#include <string>

#include "core/error.hpp"
#include "core/fs.hpp"

namespace tessera {
namespace {

TEST(RequireExtension, RefusesAnotherKindOfFileAndSaysWhatItShouldBe) {
  EXPECT_NO_THROW(require_extension("out/plot.svg", ".svg", "--plot", "the plot is an SVG image"));
  for (const char* wrong : {"rows.jsonl", "plot.svg.bak", "plot"}) {
    try {
      require_extension(wrong, ".svg", "--plot", "the plot is an SVG image");
      ADD_FAILURE() << wrong << " taken for the plot";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), Error::Kind::bad_input);
      EXPECT_EQ(std::string(e.what()), std::string("--plot ") + wrong +
                                           ": the plot is an SVG image: give a file name that ends in .svg");
    }
  }
}

}  // namespace
}  // namespace tessera
