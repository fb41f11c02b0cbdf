#include "tests/adversarial/corpus_manifest.hpp"

#include <algorithm>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/fs.hpp"

namespace tessera::adversarial {

namespace {

constexpr std::size_t kReasonColumnChars = 110;  // the text table's reason column, then "..."

std::string required(const nlohmann::json& j, const char* key, const std::string& where) {
  if (!j.contains(key) || !j.at(key).is_string() || j.at(key).get<std::string>().empty())
    fail_bad_input(fmt::format("{}: missing or empty \"{}\"", where, key));
  return j.at(key).get<std::string>();
}

CorpusEntry parse_entry(const nlohmann::json& j) {
  CorpusEntry e;
  e.file = required(j, "file", "manifest entry");
  const std::string where = "manifest entry " + e.file;
  e.klass = required(j, "class", where);
  e.kind = required(j, "kind", where);
  if (e.kind != "device" && e.kind != "tu") fail_bad_input(where + ": kind must be device or tu");
  e.tries = required(j, "tries", where);
  e.caught = required(j, "caught", where);
  if (!j.contains("expect") || !j.at("expect").is_object() || j.at("expect").empty())
    fail_bad_input(where + ": \"expect\" must map at least one status to a reason substring");
  for (const auto& [status, reason] : j.at("expect").items()) {
    if (!reason.is_string()) fail_bad_input(where + ": expect." + status + " must be a reason substring");
    e.expect[parse_status(status)] = reason.get<std::string>();
  }
  e.gpu = j.value("gpu", true);
  e.shape_generic = j.value("shape_generic", false);
  e.gap = j.value("gap", std::string());
  return e;
}

std::string clip(std::string s, std::size_t n) {
  std::replace(s.begin(), s.end(), '\n', ' ');
  return s.size() <= n ? s : s.substr(0, n) + "...";
}

std::string markdown_cell(std::string s) {
  std::replace(s.begin(), s.end(), '\n', ' ');
  std::string out;
  for (char c : s) out += c == '|' ? std::string("\\|") : std::string(1, c);
  return out;
}

}  // namespace

Manifest load_manifest(const std::filesystem::path& path) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(read_file(path));
  } catch (const nlohmann::json::exception& e) {
    fail_bad_input(fmt::format("{}: {}", path.string(), e.what()));
  }
  Manifest m;
  m.shape = required(j, "shape", path.string());
  if (!j.contains("kernels") || !j.at("kernels").is_array()) fail_bad_input(path.string() + ": \"kernels\" must be a list");
  for (const auto& k : j.at("kernels")) m.kernels.push_back(parse_entry(k));
  return m;
}

std::filesystem::path adversarial_dir() { return std::filesystem::path(TESSERA_SOURCE_DIR) / "tests" / "adversarial"; }

std::string expected_statuses(const CorpusEntry& e) {
  std::vector<std::string> names;
  for (const auto& [status, reason] : e.expect) names.push_back(to_string(status));
  return fmt::format("{}", fmt::join(names, "|"));
}

std::string verdict_mismatch(const CorpusEntry& e, Status status, const std::string& reason) {
  const auto it = e.expect.find(status);
  if (it != e.expect.end() && reason.find(it->second) != std::string::npos) return {};
  std::string want;
  for (const auto& [s, sub] : e.expect)
    want += fmt::format("{}{}{}", want.empty() ? "" : " or ", to_string(s), sub.empty() ? "" : " (\"" + sub + "\")");
  return fmt::format("{}: expected {}, got {}: {}", e.file, want, to_string(status), reason);
}

std::string unguarded_ok(const EvalResult& r, bool hot) {
  const auto& i = r.integrity;
  if (i.timed_calls == 0 || i.checked_calls == 0 || !i.inputs_refreshed) return "its cold timing was not guarded";
  if (hot && i.checked_hot_replays == 0) return "no hot replay was checked";
  return {};
}

std::string text_table(const std::vector<TableRow>& rows) {
  std::string out = fmt::format("{:<34} {:<30} {:<14} {}\n", "class", "file", "status", "reason");
  for (const auto& r : rows) {
    std::string why = r.status == Status::ok ? fmt::format("paid {:.2f} us", r.cold_us) : r.reason;
    out += fmt::format("{:<34} {:<30} {:<14} {}\n", r.entry->klass, r.entry->file, to_string(r.status),
                       clip(why, kReasonColumnChars));
  }
  return out;
}

std::string markdown_table(const std::vector<TableRow>& rows) {
  std::string out =
      "| class | kernel | kind | tries | expected | status | how caught | reason |\n"
      "|---|---|---|---|---|---|---|---|\n";
  for (const auto& r : rows) {
    const auto& e = *r.entry;
    const std::string why = r.status == Status::ok ? fmt::format("paid {:.2f} us cold", r.cold_us) : r.reason;
    const std::string caught = e.gap.empty() ? e.caught : e.caught + " -- gap: " + e.gap;
    out += fmt::format("| {} | `{}` | {} | {} | {} | {} | {} | {} |\n", markdown_cell(e.klass), e.file, e.kind,
                       markdown_cell(e.tries), markdown_cell(expected_statuses(e)), to_string(r.status), markdown_cell(caught),
                       markdown_cell(why));
  }
  return out;
}

}  // namespace tessera::adversarial
