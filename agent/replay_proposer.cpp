// ReplayProposer: serves the actions recorded in a trajectories.jsonl.
// Inside a search (context.step >= 0) it serves the record of that step, so
// what a step gets does not depend on the order of calls, on novelty retries
// or on a resume: a resumed run is served exactly what an uninterrupted one
// was. Outside a search it serves the records in file order, one per call.
// Fields read from each record (all optional; docs/agent.md):
//   candidate.source  the evaluated kernel source (used first when non-empty)
//   candidate.kind    device_only | translation_unit (else detected)
//   candidate.name    the candidate name (else replay_<line>)
//   action_kind + action            top-level strings, or
//   action: {"kind", "content"}     the search's form
//     kind full_source: content is the source; kind diff: SEARCH/REPLACE
//     blocks applied to the context's parent
//   messages          [{role, content}], copied into the proposal
//   step              the step the record serves (else its position among
//                     the replayable records); copied into proposer_info
// Records with none of these (run headers, totals, failed proposals) are
// skipped; a line that is not JSON (a torn last line) is skipped with a warning.
#include <fstream>
#include <map>
#include <mutex>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "agent/parse.hpp"
#include "agent/proposers.hpp"
#include "core/error.hpp"

namespace tessera::agent {

namespace {

struct ReplayItem {
  int line = 0;
  std::string kind;     // full_source | diff
  std::string content;  // source or diff text
  std::string original_kind;
  std::string name;
  std::optional<CandidateKind> candidate_kind;
  nlohmann::json messages = nlohmann::json::array();
  nlohmann::json step;
};

std::string string_at(const nlohmann::json& j, const char* key) {
  return j.is_object() && j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : std::string();
}

std::optional<ReplayItem> item_from(const nlohmann::json& r, int line) {
  if (!r.is_object()) return std::nullopt;
  ReplayItem it;
  it.line = line;
  std::string action_kind = string_at(r, "action_kind"), action = string_at(r, "action");
  if (r.contains("action") && r["action"].is_object()) {
    action_kind = string_at(r["action"], "kind");
    action = string_at(r["action"], "content");
  }
  it.original_kind = action_kind;
  if (r.contains("candidate") && r["candidate"].is_object()) {
    const auto& c = r["candidate"];
    it.name = string_at(c, "name");
    try {
      if (const std::string k = string_at(c, "kind"); !k.empty()) it.candidate_kind = parse_candidate_kind(k);
    } catch (const Error&) {
      // a kind this tessera does not name: detected from the source instead
    }
    if (auto src = string_at(c, "source"); !src.empty()) {
      it.kind = "full_source";
      it.content = src;
    }
  }
  if (it.content.empty()) {
    if (action.empty() || (action_kind != "full_source" && action_kind != "diff")) return std::nullopt;
    it.kind = action_kind;
    it.content = action;
  }
  if (r.contains("messages") && r["messages"].is_array()) it.messages = r["messages"];
  if (r.contains("step")) it.step = r["step"];
  return it;
}

class ReplayProposer final : public Proposer {
public:
  explicit ReplayProposer(const std::filesystem::path& path) : path_(path) {
    std::ifstream in(path);
    if (!in) fail_bad_input(fmt::format("cannot open trajectories file {}", path.string()));
    std::string text;
    int line_no = 0, skipped = 0;
    while (std::getline(in, text)) {
      ++line_no;
      if (text.find_first_not_of(" \t\r") == std::string::npos) continue;
      auto j = nlohmann::json::parse(text, nullptr, false);
      if (j.is_discarded()) {
        spdlog::warn("{}:{}: not JSON (torn line?); skipped", path.string(), line_no);
        ++skipped;
        continue;
      }
      if (auto item = item_from(j, line_no)) items_.push_back(std::move(*item));
      else ++skipped;
    }
    if (items_.empty())
      fail_bad_input(fmt::format("{} has no replayable records (need candidate.source, or action_kind + action)", path.string()));
    index_by_step();
    spdlog::info("replay: {} records from {} ({} lines skipped)", items_.size(), path.string(), skipped);
  }

  std::string name() const override { return "replay"; }

  Proposal propose(const ProposalContext& context) override {
    Proposal p;
    p.proposer = "replay";
    const std::optional<std::size_t> index = pick(context, &p.error);
    if (!index) return p;
    const ReplayItem& it = items_[*index];
    p.proposer_info = {{"file", path_.string()}, {"line", it.line}, {"record", *index}, {"original_action_kind", it.original_kind}};
    if (!it.step.is_null()) p.proposer_info["step"] = it.step;
    for (const auto& m : it.messages)
      if (m.is_object() && m.contains("role") && m.contains("content") && m["content"].is_string())
        p.messages.push_back({string_at(m, "role"), m["content"].get<std::string>()});
    p.action_kind = "replay";
    p.action = it.content;
    std::string source = it.content;
    if (it.kind == "diff") {
      if (!context.parent) {
        p.error = fmt::format("record at line {} is a diff but the context has no parent to apply it to", it.line);
        return p;
      }
      const ApplyResult applied = apply_diff(context.parent->candidate.source, extract_diff_blocks(it.content));
      if (!applied.ok) {
        p.error = fmt::format("record at line {}: {}", it.line, applied.error);
        return p;
      }
      source = applied.source;
    }
    p.candidate.source = source;
    p.candidate.name = it.name.empty() ? fmt::format("replay_{}", it.line) : it.name;
    p.candidate.meta = {{"proposer", "replay"}, {"replay_line", it.line}};
    if (it.candidate_kind) {
      p.candidate.kind = *it.candidate_kind;
    } else {
      try {
        p.candidate.kind = detect_kind(source);
      } catch (const Error& e) {
        p.error = fmt::format("record at line {}: {}", it.line, e.what());
        return p;
      }
    }
    p.ok = true;
    return p;
  }

private:
  // A record serves the step it was recorded at. Records without an integer
  // `step` (hand-written files) serve their position among the replayable
  // records, which is what file order gave a search that asks once per step.
  // When two records claim a step, the first in the file wins.
  void index_by_step() {
    int shadowed = 0, first_line = 0;
    for (std::size_t i = 0; i < items_.size(); ++i) {
      const ReplayItem& it = items_[i];
      const long long step = it.step.is_number_integer() ? it.step.get<long long>() : (long long)i;
      if (!by_step_.emplace(step, i).second && shadowed++ == 0) first_line = it.line;
    }
    if (shadowed > 0)
      spdlog::warn("{}: {} records repeat the step of an earlier record (first at line {}); the earlier ones are served",
                   path_.string(), shadowed, first_line);
  }

  // The record this call gets, or why there is none (a failure the search
  // records, never an exception).
  std::optional<std::size_t> pick(const ProposalContext& context, std::string* error) {
    if (context.step >= 0) {
      if (auto f = by_step_.find(context.step); f != by_step_.end()) return f->second;
      *error = fmt::format("replay has no record for step {} in {} (its {} records serve steps {} to {}; a step whose "
                           "recorded proposal failed has none)",
                           context.step, path_.string(), by_step_.size(), by_step_.begin()->first,
                           by_step_.rbegin()->first);
      return std::nullopt;
    }
    std::lock_guard lock(mutex_);
    if (next_ < items_.size()) return next_++;
    *error = fmt::format("replay exhausted: all {} records of {} were served", items_.size(), path_.string());
    return std::nullopt;
  }

  std::filesystem::path path_;
  std::vector<ReplayItem> items_;
  std::map<long long, std::size_t> by_step_;  // step -> index into items_
  std::mutex mutex_;                          // guards next_ (file-order serving)
  std::size_t next_ = 0;
};

}  // namespace

std::unique_ptr<Proposer> make_replay_proposer(const std::filesystem::path& trajectories_jsonl) {
  return std::make_unique<ReplayProposer>(trajectories_jsonl);
}

}  // namespace tessera::agent
