#include "bench/compare.hpp"

#include <algorithm>
#include <utility>
#include <regex>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/fs.hpp"
#include "core/table.hpp"

namespace tessera::bench {

namespace {

std::vector<std::string> split_csv_line(const std::string& line) {
  std::vector<std::string> out;
  std::string field;
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') field += '"', ++i;
      else if (c == '"') quoted = false;
      else field += c;
    } else if (c == '"') quoted = true;
    else if (c == ',') out.push_back(std::exchange(field, {}));
    else if (c != '\r') field += c;
  }
  out.push_back(field);
  return out;
}

std::string our_method_of(const Run& run) {
  const std::string device = run.records.empty() ? "?" : run.records.front().device.name;
  return fmt::format("kernel GPU time (CUPTI activity records) with L2 flushed before every sample, on {}, the "
                     "baselines interleaved with the kernel in the same worker process",
                     device.empty() ? "(unknown GPU)" : device);
}

}  // namespace

OtherTable load_other_table(const std::filesystem::path& csv, const std::string& name) {
  OtherTable t;
  t.name = name;
  t.path = csv.string();
  std::istringstream in(read_file(csv));
  std::string line;
  if (!std::getline(in, line)) fail_bad_input(csv.string() + ": empty file");
  const auto header = split_csv_line(line);
  const auto key = std::find(header.begin(), header.end(), "mnk");
  if (key == header.end()) fail_bad_input(csv.string() + ": no 'mnk' column (expected a per-shape table keyed M_N_K)");
  const std::size_t key_col = std::size_t(key - header.begin());
  for (std::size_t i = 0; i < header.size(); ++i)
    if (i != key_col) t.columns.push_back(header[i]);
  static const std::regex mnk_form(R"(^\d+_\d+_\d+$)");
  for (int line_no = 2; std::getline(in, line); ++line_no) {
    if (line.find_first_not_of(" \r") == std::string::npos) continue;
    const auto fields = split_csv_line(line);
    const std::string where = fmt::format("{}:{}", csv.string(), line_no);
    if (fields.size() != header.size())
      fail_bad_input(fmt::format("{}: {} fields, the header has {}", where, fields.size(), header.size()));
    const std::string& mnk = fields[key_col];
    if (!std::regex_match(mnk, mnk_form)) fail_bad_input(fmt::format("{}: bad mnk '{}' (expected M_N_K)", where, mnk));
    if (t.values.count(mnk)) fail_bad_input(fmt::format("{}: {} is listed twice", where, mnk));
    auto& row = t.values[mnk];
    for (std::size_t i = 0; i < fields.size(); ++i) {
      if (i == key_col || fields[i].empty()) continue;
      try {
        std::size_t used = 0;
        const double v = std::stod(fields[i], &used);
        if (used != fields[i].size() || !(v > 0)) throw std::invalid_argument("");
        row[header[i]] = v;
      } catch (const std::exception&) {
        fail_bad_input(fmt::format("{}: column {}: '{}' is not a positive number", where, header[i], fields[i]));
      }
    }
  }
  if (t.values.empty()) fail_bad_input(csv.string() + ": no rows");
  return t;
}

Comparison compare_runs(const Run& run, const std::vector<ShapeRow>& rows, const OtherTable& other,
                        const std::string& other_method) {
  Comparison c;
  c.other_name = other.name;
  c.other_path = other.path;
  c.other_method = other_method;
  c.our_method = our_method_of(run);
  c.their_shapes = int(other.values.size());
  for (const auto& col : speedup_column_names())
    if (std::find(other.columns.begin(), other.columns.end(), col) != other.columns.end()) c.columns.push_back(col);
  if (c.columns.empty())
    fail_bad_input(fmt::format("{} has no speedup column in common with ours ({}...)", other.path,
                               speedup_column_names().front()));
  for (const auto& r : rows) {
    if (!r.kernel_us) continue;
    ++c.our_shapes;
    auto it = other.values.find(r.mnk);
    if (it == other.values.end()) continue;
    CompareRow cr{r.mnk, r.bucket, {}, {}};
    for (const auto& col : c.columns) {
      auto o = r.speedup.find(col);
      auto t = it->second.find(col);
      if (o != r.speedup.end() && t != it->second.end()) {
        cr.ours[col] = o->second;
        cr.theirs[col] = t->second;
      }
    }
    if (!cr.ours.empty()) c.rows.push_back(std::move(cr));
  }
  if (c.our_shapes == 0) fail_bad_input(run.dir.string() + " has no timed kernel to compare (a baselines-only sweep?)");
  std::vector<std::string> buckets;
  for (const auto& b : run.config.buckets) buckets.push_back(b.name);
  buckets.push_back(kAllBuckets);
  for (const auto& name : buckets) {
    CompareBucket cb;
    cb.bucket = name;
    for (const auto& col : c.columns) {
      std::vector<double> ours, theirs;
      for (const auto& r : c.rows) {
        if (name != kAllBuckets && r.bucket != name) continue;
        auto o = r.ours.find(col);
        if (o == r.ours.end()) continue;
        ours.push_back(o->second);
        theirs.push_back(r.theirs.at(col));
        cb.ours_ahead[col] += o->second > r.theirs.at(col);
        ++cb.compared[col];
      }
      cb.ours[col] = stat_of(ours);
      cb.theirs[col] = stat_of(theirs);
    }
    c.buckets.push_back(std::move(cb));
  }
  return c;
}

std::string caveat(const Comparison& c) {
  return fmt::format(
      "{0} measured differently: {1}. tessera measured {2}. Each side's speedup is a ratio of two times from its own "
      "runs, on its own GPU; the methods differ, so compare the ratios as indications, not as times. Launch overhead "
      "is inside a host timer's figure and outside a kernel-time figure, which moves small shapes most.",
      c.other_name, c.other_method, c.our_method);
}

Table comparison_table(const Comparison& c) {
  Table table({"bucket", "column", "shapes", "tessera geomean (mean)", c.other_name + " geomean (mean)",
               "tessera ahead"});
  for (const auto& b : c.buckets)
    for (const auto& col : c.columns) {
      const auto& o = b.ours.at(col);
      const auto& t = b.theirs.at(col);
      if (o.n == 0) continue;
      table.add_row({b.bucket, col, std::to_string(o.n), fmt::format("{:.3f}x ({:.3f}x)", o.geomean, o.mean),
                     fmt::format("{:.3f}x ({:.3f}x)", t.geomean, t.mean),
                     fmt::format("{} of {}", b.ours_ahead.at(col), b.compared.at(col))});
    }
  return table;
}

std::string comparison_markdown(const Comparison& c) {
  std::string md = fmt::format("Compared with {} ({}), on the {} shapes both have (ours: {} timed, theirs: {}).\n\n",
                               c.other_name, c.other_path, c.rows.size(), c.our_shapes, c.their_shapes);
  md += "> " + caveat(c) + "\n\n";
  return md + to_markdown(comparison_table(c));
}

std::string comparison_csv(const Comparison& c) {
  std::vector<std::string> headers = {"mnk", "bucket"};
  for (const auto& col : c.columns) headers.insert(headers.end(), {"tessera " + col, c.other_name + " " + col});
  Table table(std::move(headers));
  for (const auto& r : c.rows) {
    std::vector<std::string> cells = {r.mnk, r.bucket};
    for (const auto& col : c.columns) {
      auto o = r.ours.find(col);
      if (o == r.ours.end()) cells.insert(cells.end(), {"", ""});
      else cells.insert(cells.end(), {fmt::format("{:.3f}", o->second), fmt::format("{:.3f}", r.theirs.at(col))});
    }
    table.add_row(std::move(cells));
  }
  return to_csv(table);
}

nlohmann::json to_json(const Comparison& c) {
  nlohmann::json buckets = nlohmann::json::array();
  for (const auto& b : c.buckets) {
    nlohmann::json cols = nlohmann::json::object();
    for (const auto& col : c.columns)
      cols[col] = {{"n", b.ours.at(col).n},
                   {"tessera_geomean", b.ours.at(col).geomean},
                   {"tessera_mean", b.ours.at(col).mean},
                   {"other_geomean", b.theirs.at(col).geomean},
                   {"other_mean", b.theirs.at(col).mean},
                   {"tessera_ahead", b.ours_ahead.at(col)}};
    buckets.push_back({{"bucket", b.bucket}, {"columns", cols}});
  }
  return {{"other", c.other_name}, {"other_path", c.other_path}, {"other_method", c.other_method},
          {"tessera_method", c.our_method}, {"shapes_compared", c.rows.size()}, {"caveat", caveat(c)},
          {"buckets", buckets}};
}

}  // namespace tessera::bench
