#include "bench/join.hpp"

#include <map>
#include <set>

#include <fmt/format.h>

#include "core/error.hpp"

namespace tessera::bench {

namespace fs = std::filesystem;

namespace {

// The options that change a measurement: all but the tasks filter, which
// only chose the shapes, and the folders an earlier join came from.
nlohmann::json protocol(const RunConfig& c) {
  nlohmann::json o = c.options;
  if (o.is_object()) o.erase("shapes"), o.erase("joined_from");
  return o;
}

}  // namespace

JoinedRun join_runs(const std::vector<fs::path>& dirs, const fs::path& out) {
  if (dirs.empty()) fail_bad_input("no runs to join");
  std::error_code ec;
  if (fs::exists(out, ec) && (!fs::is_directory(out, ec) || !fs::is_empty(out, ec)))
    fail_bad_input(fmt::format("{} is not empty: the runs are joined into a new folder (--out)", out.string()));
  std::vector<Run> runs;
  for (const auto& d : dirs) runs.push_back(load_run(d));
  const Run& first = runs.front();
  RunConfig joined = first.config;
  joined.options = protocol(first.config);
  joined.tasks.clear();
  std::set<std::string> ids;
  nlohmann::json from = nlohmann::json::array();
  for (const auto& r : runs) {
    // Alike but for their tasks and the filter that chose them.
    RunConfig a = first.config, b = r.config;
    a.tasks.clear(), b.tasks.clear();
    a.options = protocol(a), b.options = protocol(b);
    if (const auto why = config_difference(a, b); !why.empty())
      fail_bad_input(fmt::format("{} cannot be joined to {}: {}", r.dir.string(), first.dir.string(), why));
    for (const auto& t : r.config.tasks)
      if (ids.insert(t.id()).second) joined.tasks.push_back(t);
    from.push_back(r.dir.string());
  }
  joined.options["joined_from"] = from;
  // A run's records are of its own tasks; a folder edited by hand may not be
  // (checked before anything is written).
  for (const auto& r : runs)
    for (const auto& rec : r.records)
      if (!ids.count(rec.task.id()))
        fail_bad_input(fmt::format("{} holds a record of {}, which is not among its tasks", r.dir.string(),
                                   rec.task.id()));
  JoinedRun result;
  {
    RunWriter w(out, joined);
    std::map<std::string, int> recorded;
    for (const auto& r : runs)
      for (const auto& rec : r.records) {
        result.replaced += recorded[rec.task.id()]++ > 0;
        w.append(rec);
      }
  }
  result.run = load_run(out);
  return result;
}

}  // namespace tessera::bench
