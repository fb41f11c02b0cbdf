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
  e.hot_no_faster_than = j.value("hot_no_faster_than", std::string());
  e.control = j.value("control", false);
  if (e.control && (e.expect.size() != 1 || !e.expect.contains(Status::ok)))
    fail_bad_input(where + ": a control kernel tries nothing: it must expect ok only");
  return e;
}

std::string clip(std::string s, std::size_t n) {
  std::replace(s.begin(), s.end(), '\n', ' ');
  return s.size() <= n ? s : s.substr(0, n) + "...";
}

// Does the reason contain one of the '|'-separated substrings?
bool reason_matches(const std::string& reason, const std::string& alternatives) {
  std::size_t from = 0;
  for (;;) {
    const std::size_t bar = alternatives.find('|', from);
    if (reason.find(alternatives.substr(from, bar - from)) != std::string::npos) return true;
    if (bar == std::string::npos) return false;
    from = bar + 1;
  }
}

// What an ok kernel was paid, and its hot time (reported, never paid).
std::string paid(const TableRow& r) {
  std::string out = fmt::format("paid {:.2f} us cold", r.cold_us);
  if (r.hot_us > 0) out += fmt::format(" ({:.2f} us hot)", r.hot_us);
  return out;
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
  if (it != e.expect.end() && reason_matches(reason, it->second)) return {};
  std::string want;
  for (const auto& [s, sub] : e.expect)
    want += fmt::format("{}{}{}", want.empty() ? "" : " or ", to_string(s), sub.empty() ? "" : " (\"" + sub + "\")");
  return fmt::format("{}: expected {}, got {}: {}", e.file, want, to_string(status), reason);
}

std::string hot_gain_mismatch(const CorpusEntry& e, const TableRow& cached, const TableRow& control) {
  const std::string control_file = control.entry ? control.entry->file : e.hot_no_faster_than;
  if (cached.status != Status::ok || control.status != Status::ok)
    return fmt::format("{}: its hot time is compared with {}'s only when both are ok (got {} and {})", e.file,
                       control_file, to_string(cached.status), to_string(control.status));
  if (cached.cold_us <= 0 || cached.hot_us <= 0 || control.cold_us <= 0 || control.hot_us <= 0)
    return fmt::format("{}: cold and hot times of it and {} must be measured (cold {:.2f} / {:.2f} us, hot {:.2f} / "
                       "{:.2f} us)",
                       e.file, control_file, cached.cold_us, control.cold_us, cached.hot_us, control.hot_us);
  const double cold_gain = control.cold_us / cached.cold_us;
  const double hot_gain = control.hot_us / cached.hot_us;
  if (hot_gain <= std::max(1.0, cold_gain) * kHotGainSlack) return {};
  return fmt::format("{}: hot {:.2f} us against {:.2f} us for {} ({:.2f}x faster), while cold {:.2f} us against "
                     "{:.2f} us ({:.2f}x): its cache hits in hot replay",
                     e.file, cached.hot_us, control.hot_us, control_file, hot_gain, cached.cold_us, control.cold_us,
                     cold_gain);
}

std::string unguarded_ok(const EvalResult& r, bool hot) {
  const auto& i = r.integrity;
  if (i.timed_calls == 0 || i.checked_calls == 0 || !i.inputs_refreshed) return "its cold timing was not guarded";
  if (hot && i.checked_hot_replays == 0) return "no hot replay was checked";
  if (hot && i.hot_calls == 0) return "no hot call had inputs of its own";
  if (r.verify.determinism == "skipped") return "no determinism check ran";
  return {};
}

std::string text_table(const std::vector<TableRow>& rows) {
  std::string out = fmt::format("{:<34} {:<30} {:<14} {}\n", "class", "file", "status", "reason");
  for (const auto& r : rows) {
    std::string why = r.status == Status::ok ? paid(r) : r.reason;
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
    const std::string why = r.status == Status::ok ? paid(r) : r.reason;
    const std::string caught = e.gap.empty() ? e.caught : e.caught + " -- gap: " + e.gap;
    out += fmt::format("| {} | `{}` | {} | {} | {} | {} | {} | {} |\n", markdown_cell(e.klass), e.file, e.kind,
                       markdown_cell(e.tries), markdown_cell(expected_statuses(e)), to_string(r.status), markdown_cell(caught),
                       markdown_cell(why));
  }
  return out;
}

}  // namespace tessera::adversarial
