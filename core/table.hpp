#pragma once
// One writer for the tables tessera prints and files (as google/benchmark's
// console and CSV reporters, and nvbench's printers): the caller formats each
// cell as text, the writer lays the cells out, as Markdown (reports, and
// tables printed on the console) or CSV (files other tools read).
#include <string>
#include <vector>

namespace tessera {

class Table {
public:
  explicit Table(std::vector<std::string> headers);
  // One cell per header (fewer or more is a tessera bug); "" is an empty cell.
  void add_row(std::vector<std::string> cells);
  const std::vector<std::string>& headers() const { return headers_; }
  const std::vector<std::vector<std::string>>& rows() const { return rows_; }

private:
  std::vector<std::string> headers_;
  std::vector<std::vector<std::string>> rows_;
};

// "| a | b |\n|---|---|\n| 1 | 2 |\n", an empty cell as "| |". Cells are
// written as they are: Markdown in them (links, `code`) stays Markdown.
std::string to_markdown(const Table& table);

// A header line, then one line per row; a field holding a comma, a quote or
// a newline is quoted (RFC 4180).
std::string to_csv(const Table& table);
std::string csv_field(const std::string& field);

}  // namespace tessera
