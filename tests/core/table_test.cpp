#include <gtest/gtest.h>

#include "core/error.hpp"
#include "core/table.hpp"

namespace tessera {
namespace {

TEST(Table, MarkdownHasAHeaderASeparatorAndARowEach) {
  Table t({"shape", "speedup", "note"});
  t.add_row({"64x64x64", "1.031x", ""});
  t.add_row({"128x64x128", "-", "`code` stays"});
  EXPECT_EQ(to_markdown(t),
            "| shape | speedup | note |\n|---|---|---|\n| 64x64x64 | 1.031x | |\n| 128x64x128 | - | `code` stays |\n");
}

TEST(Table, CsvQuotesOnlyTheFieldsThatNeedIt) {
  Table t({"mnk", "note"});
  t.add_row({"64_64_64", "plain"});
  t.add_row({"128_64_128", "a, b and \"c\"\nnext"});
  t.add_row({"", ""});
  EXPECT_EQ(to_csv(t), "mnk,note\n64_64_64,plain\n128_64_128,\"a, b and \"\"c\"\"\nnext\"\n,\n");
}

TEST(Table, ARowMustHaveACellPerHeader) {
  Table t({"a", "b"});
  EXPECT_THROW(t.add_row({"1"}), Error);
  EXPECT_THROW(t.add_row({"1", "2", "3"}), Error);
  EXPECT_TRUE(t.rows().empty());
}

TEST(Table, AnEmptyTableIsItsHeader) {
  const Table t({"status", "steps"});
  EXPECT_EQ(to_markdown(t), "| status | steps |\n|---|---|\n");
  EXPECT_EQ(to_csv(t), "status,steps\n");
}

}  // namespace
}  // namespace tessera
