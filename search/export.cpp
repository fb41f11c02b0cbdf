#include "search/export.hpp"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "agent/proposer.hpp"
#include "core/error.hpp"
#include "core/fs.hpp"
#include "core/json_read.hpp"
#include "search/engine.hpp"
#include "search/trajectory.hpp"

namespace tessera::search {

namespace fs = std::filesystem;

namespace {

using json = nlohmann::json;

std::string str(const json& j, const char* key) {
  return j.is_object() && j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : std::string();
}
double num(const json& j, const char* key) {
  return j.is_object() && j.contains(key) && j[key].is_number() ? j[key].get<double>() : 0.0;
}

// The step's first parent, -1 when it has none (or one that is not a step number).
long long parent_of(const json& r) {
  const json p = r.value("parents", json::array());
  return p.empty() || !p[0].is_number_integer() ? -1 : p[0].get<long long>();
}

// The prompt part of a step: the chat messages before the last assistant
// reply. Steps without chat (the tile proposer) get a short synthetic prompt
// naming the task, the strategy and the parent's action.
json prompt_of(const json& r, const std::map<long long, const json*>& by_step) {
  json msgs = r.value("messages", json::array());
  json out = json::array();
  std::size_t last_assistant = msgs.size();
  for (std::size_t i = 0; i < msgs.size(); ++i)
    if (str(msgs[i], "role") == "assistant") last_assistant = i;
  for (std::size_t i = 0; i < msgs.size() && i < last_assistant; ++i)
    out.push_back({{"role", str(msgs[i], "role")}, {"content", str(msgs[i], "content")}});
  if (!out.empty()) return out;
  const json task = r.value("task", json::object());
  std::string text = fmt::format("Task: HGEMM fp16 in/out, fp32 accumulate, M={} N={} K={}, layout {}.\nStrategy: {}.\n",
                                 integer_or(task, "m", 0), integer_or(task, "n", 0), integer_or(task, "k", 0),
                                 task.value("layout", std::string("TN")), str(r.value("proposer", json::object()), "strategy"));
  const json parents = r.value("parents", json::array());
  if (!parents.empty()) {
    auto it = by_step.find(parent_of(r));
    if (it != by_step.end()) {
      const json& p = *it->second;
      const json pe = p.value("eval", json::object());
      text += fmt::format("Parent kernel (speedup {:.3f}x over the best baseline), {}:\n{}\n", num(pe, "speedup"),
                          str(p.value("action", json::object()), "kind"),
                          str(p.value("action", json::object()), "content"));
    }
  } else {
    text += "No parent kernel: propose a first one.\n";
  }
  text += "Propose a faster kernel.";
  return json::array({{{"role", "user"}, {"content", text}}});
}

// The step's answer: the last assistant message, else the action taken.
std::string completion_of(const json& r) {
  const json msgs = r.value("messages", json::array());
  for (auto it = msgs.rbegin(); it != msgs.rend(); ++it)
    if (str(*it, "role") == "assistant") return str(*it, "content");
  return str(r.value("action", json::object()), "content");
}

bool timed(const json& r) { return r.value("reward", json::object()).value("timed", false); }
double speedup(const json& r) { return timed(r) ? num(r.value("eval", json::object()), "speedup") : 0.0; }
std::string status(const json& r) { return str(r.value("reward", json::object()), "status"); }
double improvement(const json& r) {
  const json rw = r.value("reward", json::object());
  return rw.contains("improvement_over_parent") && rw["improvement_over_parent"].is_number()
             ? rw["improvement_over_parent"].get<double>()
             : 0.0;
}

json common(const json& r) {
  return {{"run", str(r, "run")},
          {"task_id", str(r, "task_id")},
          {"step", integer_value<long long>(r, "step", 0)},
          {"proposer", str(r.value("proposer", json::object()), "name")},
          {"model", str(r.value("proposer", json::object()), "model")},
          {"strategy", str(r.value("proposer", json::object()), "strategy")}};
}

}  // namespace

std::vector<json> export_lines(const std::vector<json>& records, const std::string& format) {
  std::map<long long, const json*> by_step;
  for (const auto& r : records) by_step[integer_value<long long>(r, "step", -1)] = &r;
  std::vector<json> out;
  if (format == "sft") {
    for (const auto& r : records) {
      const json rw = r.value("reward", json::object());
      const bool improving = timed(r) && (improvement(r) > 0 || rw.value("new_best", false));
      if (!improving) continue;
      json msgs = prompt_of(r, by_step);
      msgs.push_back({{"role", "assistant"}, {"content", completion_of(r)}});
      json line = common(r);
      line["messages"] = msgs;
      line["speedup"] = speedup(r);
      line["improvement"] = improvement(r);
      out.push_back(line);
    }
  } else if (format == "dpo") {
    std::map<std::pair<std::string, long long>, std::vector<const json*>> groups;
    for (const auto& r : records)
      if (r.value("proposal_ok", false) && r.value("evaluated", false) && parent_of(r) >= 0)
        groups[{str(r, "task_id"), parent_of(r)}].push_back(&r);
    for (auto& [key, members] : groups) {
      std::stable_sort(members.begin(), members.end(),
                       [](const json* a, const json* b) { return speedup(*a) > speedup(*b); });
      const json& chosen = *members.front();
      if (!timed(chosen)) continue;
      int pairs = 0;
      for (std::size_t i = members.size(); i-- > 1 && pairs < kMaxPairsPerParent;) {
        const json& rejected = *members[i];
        // Only clear preferences: a failure, or slower by more than the chosen one's measured spread.
        const double spread = num(chosen.value("eval", json::object()).value("cold", json::object()), "rel_spread");
        if (timed(rejected) && speedup(rejected) >= speedup(chosen) * (1.0 - std::max(spread, 0.01))) continue;
        json line = common(chosen);
        line["prompt"] = prompt_of(chosen, by_step);
        line["chosen"] = json::array({{{"role", "assistant"}, {"content", completion_of(chosen)}}});
        line["rejected"] = json::array({{{"role", "assistant"}, {"content", completion_of(rejected)}}});
        line["parent"] = key.second;
        line["rejected_step"] = integer_value<long long>(rejected, "step", 0);
        line["chosen_speedup"] = speedup(chosen);
        line["rejected_speedup"] = speedup(rejected);
        line["rejected_status"] = status(rejected);
        out.push_back(line);
        ++pairs;
      }
    }
  } else if (format == "rl") {
    for (const auto& r : records) {
      const json rw = r.value("reward", json::object());
      json line = common(r);
      line["prompt"] = prompt_of(r, by_step);
      line["completion"] = completion_of(r);
      line["reward"] = num(rw, "scalar");
      line["status"] = status(r);
      line["timed"] = timed(r);
      line["masked"] = rw.value("masked", false);
      line["speedup"] = speedup(r);
      line["improvement"] = improvement(r);
      line["has_parent"] = parent_of(r) >= 0;
      line["tokens"] = agent::total_tokens(r.value("usage", json::object()).get<agent::Usage>());
      out.push_back(line);
    }
  } else {
    fail_bad_input("unknown export format '" + format + "' (sft | dpo | rl)");
  }
  return out;
}

std::string empty_export_reason(const std::vector<json>& records, const std::string& format) {
  if (records.empty()) return "the run has no trajectory records yet";
  long long evaluated = 0, timed_steps = 0;
  for (const auto& r : records) {
    evaluated += r.value("evaluated", false) ? 1 : 0;
    timed_steps += timed(r) ? 1 : 0;
  }
  const std::string measured =
      evaluated == 0 ? fmt::format("none of the {} steps was evaluated (every proposal failed or repeated a kernel)",
                                   records.size())
      : timed_steps == 0
          ? fmt::format("none of the {} evaluated steps was timed (a compile-only run measures nothing)", evaluated)
          : std::string();
  if (format == "sft")
    return (measured.empty() ? fmt::format("none of the {} timed steps improved on its parent", timed_steps) : measured) +
           "; sft keeps only timed steps that improved on their parent or set a new best";
  if (format == "dpo")
    return (measured.empty() ? std::string("no parent kernel has two evaluated children of which a timed one is "
                                           "clearly faster")
                             : measured) +
           "; dpo pairs children of one parent, the faster timed one chosen";
  return "";
}

ExportResult export_run(const fs::path& run_dir, const std::string& format, const fs::path& out) {
  if (!fs::exists(trajectories_path(run_dir)))
    fail_bad_input("no trajectories at " + trajectories_path(run_dir).string());
  const auto records = read_jsonl(trajectories_path(run_dir));
  const auto lines = export_lines(records, format);
  ExportResult res;
  res.path = out.empty() ? run_dir / "export" / (format + ".jsonl") : out;
  if (res.path.has_parent_path()) fs::create_directories(res.path.parent_path());
  std::string text;
  for (const auto& l : lines) text += l.dump() + "\n";
  atomic_write_file(res.path, text);
  res.lines = (long long)lines.size();
  res.records = (long long)records.size();
  if (lines.empty()) res.empty_reason = empty_export_reason(records, format);
  return res;
}

}  // namespace tessera::search
