// What a run leaves behind: trajectory schema, report with SVG plots, exports.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <map>
#include <optional>
#include <set>

#include "engine_helpers.hpp"
#include "core/error.hpp"
#include "core/fs.hpp"
#include "search/export.hpp"
#include "search/report.hpp"
#include "search/svg.hpp"

namespace tessera::search::testing {
namespace {

namespace fs = std::filesystem;

// One shared run for the output tests (noisy, with failures, two tasks).
const fs::path& sample_run() {
  static const fs::path dir = [] {
    const auto d = fresh_dir("outputs");
    FakeRun run;
    run.noisy_spread = 0.3;
    run.broken_stages = 5;
    run.tasks = {task_from_shape("4096x4096x4096"), task_from_shape("256x512x1024")};
    run_fake(small_config("evolve", 40, 4), d, run);
    return d;
  }();
  return dir;
}

TEST(TrajectorySchema, RecordsCarryEveryDocumentedField) {
  for (const auto& r : records(sample_run())) {
    for (const char* k : {"schema", "run", "task", "task_id", "step", "parents", "proposer", "messages", "action",
                          "candidate", "eval", "reward", "usage", "timestamps", "acceptance", "novelty_rejects",
                          "totals", "plan", "descriptor"})
      EXPECT_TRUE(r.contains(k)) << k << " missing at step " << r["step"];
    for (const char* k : {"name", "model", "strategy", "arm", "temperature", "seed"})
      EXPECT_TRUE(r["proposer"].contains(k)) << "proposer." << k;
    for (const char* k : {"scalar", "bandit", "timed", "valid", "improvement_over_parent", "speedup_vs_baseline"})
      EXPECT_TRUE(r["reward"].contains(k)) << "reward." << k;
    EXPECT_TRUE(r["timestamps"].contains("planned"));
    EXPECT_TRUE(r["timestamps"].contains("applied"));
  }
}

TEST(TrajectorySchema, OutcomesRoundTripThroughRecords) {
  for (const auto& r : records(sample_run())) {
    const StepOutcome o = outcome_from_json(r);
    const nlohmann::json again = outcome_json(o);
    for (const auto& [k, v] : again.items()) EXPECT_EQ(v, r.at(k)) << k << " at step " << r["step"];
    if (o.evaluated) {
      EXPECT_EQ(nlohmann::json(o.result), r["eval"]);
      EXPECT_EQ(o.candidate.source, r["candidate"]["source"].get<std::string>());
    }
  }
}

TEST(Report, WritesMarkdownAndSvgPlots) {
  const RunView run = load_run(sample_run());
  ASSERT_EQ(run.tasks.size(), 2u);
  const fs::path report = write_report(run);
  const std::string md = read_file(report);
  for (const char* plot : {"best_vs_evals.svg", "speedup_per_shape.svg", "archive_0.svg", "archive_1.svg"}) {
    const fs::path p = sample_run() / "plots" / plot;
    ASSERT_TRUE(fs::exists(p)) << plot;
    const std::string svg = read_file(p);
    EXPECT_EQ(svg.rfind("<svg", 0), 0u);
    EXPECT_NE(svg.find("</svg>"), std::string::npos);
    EXPECT_NE(md.find(std::string("plots/") + plot), std::string::npos);
  }
  EXPECT_NE(read_file(sample_run() / "plots" / "archive_0.svg").find("rgb("), std::string::npos);
  EXPECT_NE(read_file(sample_run() / "plots" / "best_vs_evals.svg").find("<polyline"), std::string::npos);
  for (const auto& t : run.tasks) {
    EXPECT_NE(md.find(t.id), std::string::npos);
    EXPECT_GT(t.best_speedup, 0);
    EXPECT_GT(t.cublas_tflops, 0);
    EXPECT_GT(t.cublaslt_autotuned_tflops, 0);
    EXPECT_GE(t.evals_to_near_best, 1);
    EXPECT_LE(t.evals_to_near_best, t.evaluations);
    EXPECT_FALSE(t.cells.empty());
  }
  const std::string summary = final_summary(run);
  EXPECT_NE(summary.find("cuBLASLt autotuned"), std::string::npos);
  EXPECT_EQ(summary.find("lent"), std::string::npos) << "interleaved baselines: nothing to say";
  RunView lent = run;
  lent.config.config.reuse_baselines = true;
  EXPECT_NE(final_summary(lent).find("lent to the rest (--reuse-baselines)"), std::string::npos) << final_summary(lent);
  EXPECT_EQ(md.find("Compile-only run"), std::string::npos);
}

nlohmann::json tile_step(const std::string& move, bool explore, std::optional<double> speedup, bool new_best,
                         const std::string& gave_way = "") {
  nlohmann::json info = {{"move", move}, {"explore", explore}};
  if (!gave_way.empty()) info["far_slower"] = {{"kind", gave_way}, {"predicted_us", 20.0}};
  return {{"proposer_name", "tile"},
          {"proposer_info", info},
          {"reward", {{"timed", speedup.has_value()}, {"new_best", new_best}, {"speedup_vs_baseline", speedup.value_or(0)}}}};
}

TEST(Report, CountsTheTileMovesTheirExplorationAndWhatEachFound) {
  const std::vector<nlohmann::json> records = {
      tile_step("model", false, 0.90, true),       tile_step("model", false, 0.95, true),
      tile_step("neighbour", false, 0.97, true),   tile_step("neighbour", true, std::nullopt, false),
      tile_step("model", false, 0.93, false, "crossover"),
      {{"proposer_name", "llm"}, {"proposer_info", {{"move", "x"}}}},  // not the tile proposer's
      {{"proposer_name", "tile"}, {"proposer_info", {{"strategy", "s"}}}},  // a tile step without a move
      {{"proposer_name", "tile"}, {"proposer_info", {{"move", "restart"}, {"explore", nullptr}}},  // another version's
       {"reward", {{"timed", true}, {"new_best", 1}, {"speedup_vs_baseline", nullptr}}}}};
  const std::string md = tile_moves_section(records);
  EXPECT_NE(md.find("| model | 3 | 0 | 0 | 3 | 2 | 0.950x |"), std::string::npos) << md;
  EXPECT_NE(md.find("| neighbour | 2 | 1 | 0 | 1 | 1 | 0.970x |"), std::string::npos) << md;
  EXPECT_NE(md.find("| crossover | 0 | 0 | 1 | 0 | 0 | - |"), std::string::npos) << md;
  EXPECT_NE(md.find("1 of the tile proposer's 6 steps were counted exploration"), std::string::npos) << md;
  EXPECT_NE(md.find("| restart | 1 | 0 | 0 | 1 | 0 | - |"), std::string::npos) << "fields of other types read as none";
  EXPECT_EQ(md.find("| x |"), std::string::npos) << md;
  EXPECT_EQ(tile_moves_section({records[5], records[6]}), "") << "no tile move, no section";
  RunView view;  // what the CLI prints at the end: one line of it
  view.records = records;
  EXPECT_EQ(final_summary(view), "tile moves: model 3, neighbour 2, restart 1; 1 explored\n");
  EXPECT_EQ(read_file(write_report(load_run(sample_run()))).find("## Tile moves"), std::string::npos)
      << "the fake proposer reports no moves";
}

TEST(Svg, EscapesTextAndDrawsEveryBar) {
  const std::string s = svg::bar_chart("a<b", "y", {"x&1", "x2", "x3"}, {0.5, 1.2, 0.9}, 1.0);
  EXPECT_NE(s.find("a&lt;b"), std::string::npos);
  EXPECT_NE(s.find("x&amp;1"), std::string::npos);
  std::size_t bars = 0;
  for (std::size_t p = s.find("<rect"); p != std::string::npos; p = s.find("<rect", p + 1)) ++bars;
  EXPECT_EQ(bars, 2u + 3u);  // background + frame + 3 bars
  const std::string h = svg::heatmap("t", {"r1", "r2"}, {"c1"}, {{1.0}, {std::nullopt}});
  EXPECT_NE(h.find("#f4f4f4"), std::string::npos);  // the empty cell
}

TEST(Svg, TicksOfOneAxisReadAlike) {
  svg::Series best;
  best.name = "search";
  best.x = {1, 8, 16, 24};
  best.y = {1.0, 1.02, 1.05, 1.1};
  const std::string s = svg::line_chart("t", "evaluations", "speedup", {best});
  EXPECT_NE(s.find(">5</text>"), std::string::npos) << s;
  EXPECT_NE(s.find(">10</text>"), std::string::npos) << s;
  EXPECT_EQ(s.find(">10.0</text>"), std::string::npos) << "one axis, one spelling: 5, 10, 15";
  EXPECT_NE(s.find(">1.02</text>"), std::string::npos) << s;
}

// Panels of one figure: each chart below the ones before it, in a document as
// wide as the widest and as tall as all of them.
TEST(Svg, StacksChartsOneBelowTheOther) {
  const std::string bars = svg::bar_chart("bars", "y", {"a"}, {1.0});
  const std::string map = svg::heatmap("map", {"r1", "r2", "r3", "r4", "r5", "r6"}, {"c1"},
                                       {{1.0}, {2.0}, {3.0}, {4.0}, {5.0}, {6.0}});
  const std::string both = svg::stack({bars, map});
  const int map_height = std::stoi(map.substr(map.find(" height=\"") + 9));
  ASSERT_GT(map_height, svg::kHeight) << "a taller chart than the bars, so the sum is not a guess";
  EXPECT_EQ(both.rfind(fmt::format("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\"",
                                   svg::kWidth, svg::kHeight + map_height),
                       0),
            0u)
      << both.substr(0, 200);
  EXPECT_NE(both.find("<svg y=\"0\" xmlns"), std::string::npos);
  EXPECT_NE(both.find(fmt::format("<svg y=\"{}\" xmlns", svg::kHeight)), std::string::npos);
  EXPECT_NE(both.find(">bars<"), std::string::npos);
  EXPECT_NE(both.find(">map<"), std::string::npos);
  EXPECT_THROW(svg::stack({"<g>not a chart</g>"}), Error);
}

// The HF `datasets` JSON loader needs one object per line, the same keys on
// every line and one JSON type per key.
void expect_consistent(const std::vector<nlohmann::json>& lines) {
  ASSERT_FALSE(lines.empty());
  std::map<std::string, nlohmann::json::value_t> types;
  for (const auto& [k, v] : lines.front().items()) types[k] = v.type();
  for (const auto& l : lines) {
    ASSERT_TRUE(l.is_object());
    ASSERT_EQ(l.size(), types.size()) << l.dump();
    for (const auto& [k, v] : l.items()) {
      ASSERT_TRUE(types.count(k)) << k;
      auto t = v.type(), want = types[k];
      // Integers and floats mix freely in the loader; nulls do not belong here.
      const auto numeric = [](nlohmann::json::value_t x) {
        return x == nlohmann::json::value_t::number_float || x == nlohmann::json::value_t::number_integer ||
               x == nlohmann::json::value_t::number_unsigned;
      };
      EXPECT_NE(t, nlohmann::json::value_t::null) << k;
      if (!(numeric(t) && numeric(want))) {
        EXPECT_EQ(t, want) << k;
      }
    }
  }
}

void expect_chat(const nlohmann::json& msgs) {
  ASSERT_TRUE(msgs.is_array());
  ASSERT_FALSE(msgs.empty());
  for (const auto& m : msgs) {
    EXPECT_TRUE(m["role"].is_string());
    EXPECT_TRUE(m["content"].is_string());
    EXPECT_FALSE(m["content"].get<std::string>().empty());
  }
}

TEST(Export, SftHasImprovingStepsAsChats) {
  const auto res = export_run(sample_run(), "sft");
  const auto lines = read_jsonl(res.path);
  EXPECT_EQ((long long)lines.size(), res.lines);
  expect_consistent(lines);
  for (const auto& l : lines) {
    expect_chat(l["messages"]);
    EXPECT_EQ(l["messages"].back()["role"], "assistant");
    EXPECT_GT(l["speedup"].get<double>(), 0);
  }
}

TEST(Export, DpoPairsPreferTheFasterChild) {
  const auto res = export_run(sample_run(), "dpo");
  const auto lines = read_jsonl(res.path);
  expect_consistent(lines);
  for (const auto& l : lines) {
    expect_chat(l["prompt"]);
    expect_chat(l["chosen"]);
    expect_chat(l["rejected"]);
    EXPECT_GT(l["chosen_speedup"].get<double>(), l["rejected_speedup"].get<double>());
    EXPECT_NE(l["chosen"], l["rejected"]);
  }
}

TEST(Export, RlHasOneRewardRecordPerStep) {
  const auto res = export_run(sample_run(), "rl");
  const auto lines = read_jsonl(res.path);
  EXPECT_EQ(lines.size(), records(sample_run()).size());
  expect_consistent(lines);
  std::set<std::string> statuses;
  for (const auto& l : lines) {
    statuses.insert(l["status"].get<std::string>());
    if (l["status"] == "compile_error") {
      EXPECT_EQ(l["reward"].get<double>(), kFailurePenalty);
    }
  }
  EXPECT_TRUE(statuses.count("ok"));
  EXPECT_TRUE(statuses.count("compile_error"));
}

TEST(Export, RejectsUnknownFormatsAndMissingRuns) {
  EXPECT_THROW(export_run(sample_run(), "csv"), Error);
  EXPECT_THROW(export_run(fresh_dir("empty"), "sft"), Error);
}

}  // namespace
}  // namespace tessera::search::testing
