#include "core/table.hpp"

#include "core/error.hpp"

namespace tessera {

Table::Table(std::vector<std::string> headers) : headers_(std::move(headers)) {}

void Table::add_row(std::vector<std::string> cells) {
  TESSERA_REQUIRE(cells.size() == headers_.size(), "a table row needs one cell per header");
  rows_.push_back(std::move(cells));
}

namespace {

std::string markdown_line(const std::vector<std::string>& cells) {
  std::string s = "|";
  for (const auto& c : cells) s += c.empty() ? " |" : " " + c + " |";
  return s + "\n";
}

std::string csv_line(const std::vector<std::string>& fields) {
  std::string s;
  for (std::size_t i = 0; i < fields.size(); ++i) {
    if (i) s += ',';
    s += csv_field(fields[i]);
  }
  return s + "\n";
}

}  // namespace

std::string to_markdown(const Table& t) {
  std::string s = markdown_line(t.headers()) + "|";
  for (std::size_t i = 0; i < t.headers().size(); ++i) s += "---|";
  s += "\n";
  for (const auto& r : t.rows()) s += markdown_line(r);
  return s;
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

std::string to_csv(const Table& t) {
  std::string s = csv_line(t.headers());
  for (const auto& r : t.rows()) s += csv_line(r);
  return s;
}

}  // namespace tessera
