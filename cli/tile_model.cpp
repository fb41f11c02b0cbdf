// `tessera tile model train|eval|rows|features`: the learned cost model (docs/tile.md, "The
// learned cost model"). train fits it on what tessera measured (bench and
// search run folders) and stores it for the GPU's kind, where tile tune, bench
// suite and the search's tile proposer find it; eval judges it on shape
// families it was not trained on, beside the analytical model.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "agent/proposers.hpp"
#include "bench/model_data.hpp"
#include "bench/model_eval.hpp"
#include "bench/model_eval_chart.hpp"
#include "bench/model_features.hpp"
#include "bench/model_knobs.hpp"
#include "bench/model_sets.hpp"
#include "cli/command.hpp"
#include "cli/tile_args.hpp"
#include "core/error.hpp"
#include "core/fs.hpp"
#include "core/progress.hpp"
#include "core/table.hpp"
#include "tile/features.hpp"
#include "tile/learned_model.hpp"

namespace tessera::cli {

namespace {

struct ModelArgs {
  std::vector<std::string> runs;
  std::string kind;      // "" = the kind with most rows
  std::string prior;     // a device kind (its stored model) or a model file
  std::string out;       // train: where the model goes (default: the cache's cost_models/<kind>.json)
  std::string model;     // eval: judge this model file on every row instead of cross-validating
  std::string plot;      // eval: also draw the judgement into this SVG file
  int folds = 5;
  int online = 0;        // eval --model: replay learning during a search over this many picks
  bool knobs = false;    // eval: the one-knob pairs table (of --model, or of each fold's model)
  bool by_input = false; // eval: leave one input out instead of the family folds
  bool json = false;
  bool no_progress = false;
  tile::TrainOptions train;
};

// The boosting rounds as a progress bar on stderr: the shipped H200 model's
// recipe trains for a minute on 2 cores, and its judgement by family for
// five; nothing was printed until the end. Cleared before the report.
class RoundsProgress {
public:
  RoundsProgress(bool on, std::string tag) {
    if (on) bar_.emplace(std::move(tag));
  }
  ~RoundsProgress() { if (bar_) bar_->clear(); }
  RoundsProgress(const RoundsProgress&) = delete;
  RoundsProgress& operator=(const RoundsProgress&) = delete;

  // `o` with its rounds reported here.
  tile::TrainOptions options(tile::TrainOptions o) {
    if (bar_) o.on_round = [this](int done, int total) { update(done, total); };
    return o;
  }

private:
  void update(int done, int total) {
    const double fraction = total > 0 ? double(done) / total : 1.0;
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    const double left = fraction > 0 ? elapsed * (1 - fraction) / fraction : 0;
    bar_->update(fraction, fmt::format("{} of {} boosting rounds, about {} left", done, total,
                                       left >= 90 ? fmt::format("{:.0f} min", left / 60) : fmt::format("{:.0f} s", left)));
  }
  std::optional<ProgressBar> bar_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

std::vector<std::filesystem::path> paths(const std::vector<std::string>& runs) {
  return {runs.begin(), runs.end()};
}

// The kind with the most rows, or the one asked for (bad_input if it has none);
// "all" pools every kind's rows (the features carry the device).
std::string pick_kind(const std::vector<tile::Measurement>& rows, const std::string& asked) {
  std::map<std::string, int> count;
  for (const auto& m : rows) ++count[m.device_kind];
  if (!asked.empty() && asked != tile::kEveryKind) {
    if (!count.count(asked)) fail_bad_input(fmt::format("--device-kind {}: no measurement of that kind in the runs", asked));
    return asked;
  }
  if (count.empty()) fail_bad_input("the runs hold no verified, timed tile config to learn from");
  if (asked == tile::kEveryKind) return asked;
  return std::max_element(count.begin(), count.end(), [](auto& a, auto& b) { return a.second < b.second; })->first;
}

tile::LearnedModel load_prior(const std::string& prior) {
  if (prior.empty()) return {};
  std::error_code ec;
  if (std::filesystem::is_regular_file(prior, ec)) return tile::LearnedModel::load(prior);
  const auto path = tile::stored_model_path(prior);
  if (path.empty()) fail_bad_input(fmt::format("--prior {}: no model stored for that kind, and no such file", prior));
  return tile::LearnedModel::load(path);
}

void require_xgboost() {
  if (!tile::LearnedModel::available())
    throw Error(Error::Kind::unavailable,
                "this tessera was built without XGBoost: install libxgboost-dev and build again");
}

void cmd_train(const ModelArgs& a) {
  require_xgboost();
  const auto data = bench::read_model_data(paths(a.runs));
  const std::string kind = pick_kind(data.rows, a.kind);
  const auto rows = bench::of_kind(data.rows, kind);
  const tile::LearnedModel prior = load_prior(a.prior);
  const tile::LearnedModel model = [&] {
    RoundsProgress progress(!a.no_progress, "tile model train");
    return tile::LearnedModel::train(rows, prior, progress.options(a.train), kind);
  }();
  const std::filesystem::path out = a.out.empty() ? cache_dir() / "cost_models" / (kind + ".json") : std::filesystem::path(a.out);
  model.save(out);
  fmt::print("trained {} on {} measurements of {} shapes ({} run folders, {} records skipped); saved {}\n",
             model.describe(), rows.size(), [&] {
               std::set<std::string> s;
               for (const auto& m : rows) s.insert(m.task.id());
               return s.size();
             }(), data.runs, data.skipped, out.string());
  // Measured (docs/tile.md): a layer trained on 67 LLM layers over the shipped model ranked held-out
  // grid shapes of the same sizes far worse than the model under it. Say what it saw.
  const auto extent = [&](auto dim) {
    const auto [lo, hi] = std::minmax_element(rows.begin(), rows.end(),
                                              [&](const auto& x, const auto& y) { return dim(x.task) < dim(y.task); });
    return fmt::format("{}-{}", dim(lo->task), dim(hi->task));
  };
  fmt::print("it learned from M {}, N {}, K {}; on other shapes it may rank worse than {}{}: judge it there with "
             "`tessera tile model eval OTHER_RUNS --model {}`\n",
             extent([](const Task& t) { return t.m; }), extent([](const Task& t) { return t.n; }),
             extent([](const Task& t) { return t.k; }), prior.empty() ? "the analytical model" : prior.describe(),
             !prior.empty() && a.train.reach > 0
                 ? fmt::format(" (beyond {:g} in log2 M, N, K from every shape it learned from, the prior's "
                               "prediction stands: --reach)",
                               a.train.reach)
                 : "",
             out.string());
}

// The rows `train` would learn from, a JSON line each: a model's training data
// kept without its run folders, and read back by train and eval like a run.
void cmd_rows(const ModelArgs& a) {
  bench::check_rows_file_name(a.out, "--out");
  const auto data = bench::read_model_data(paths(a.runs));
  const std::string kind = pick_kind(data.rows, a.kind.empty() ? tile::kEveryKind : a.kind);
  const auto rows = bench::of_kind(data.rows, kind);
  bench::write_rows(a.out, rows);
  std::set<std::string> shapes, kinds;
  for (const auto& m : rows) shapes.insert(m.task.id()), kinds.insert(m.device_kind);
  fmt::print("wrote {} measurements of {} shapes ({}) from {} inputs ({} records skipped) to {}\n", rows.size(),
             shapes.size(), fmt::join(kinds, ", "), data.runs, data.skipped, a.out);
}

// The rows with every feature the trees see and what the models predict, a
// CSV line each: for fitting other rankers, and for reading where one is wrong.
void cmd_features(const ModelArgs& a) {
  require_extension(a.out, ".csv", "--out", "the feature table is CSV");
  const auto data = bench::read_model_data(paths(a.runs));
  const std::string kind = pick_kind(data.rows, a.kind.empty() ? tile::kEveryKind : a.kind);
  const auto rows = bench::of_kind(data.rows, kind);
  // A file (a name with a folder or .json), or the model tile tune ranks with on that kind: its
  // own, else the pooled one.
  const std::filesystem::path named(a.model);
  const bool file = named.has_parent_path() || named.extension() == ".json";
  if (file && !std::filesystem::is_regular_file(named))
    fail_bad_input(fmt::format("--model {}: no such model file", a.model));
  const tile::LearnedModel model = a.model.empty() ? tile::LearnedModel{}
                                   : file          ? tile::LearnedModel::load(named)
                                                   : tile::model_for_device(a.model);
  if (!a.model.empty() && model.empty())
    fail_bad_input(fmt::format("--model {}: no model stored for that kind, nor a pooled one", a.model));
  atomic_write_file(a.out, to_csv(bench::feature_table(rows, model)));
  fmt::print("wrote {} measurements with {} features each to {} (model_us: {})\n", rows.size(),
             tile::feature_names().size(), a.out, model.describe());
}

void print_row(const bench::ModelJudgement& j, const std::string& label) {
  fmt::print("{:<44} {:>6} {:>9.3f} {:>10.3f} {:>15.0f}% {:>11.2f}% {:>7.1f}% {:>9.1f}%\n", label, j.shapes.size(),
             j.mean_spearman, j.median_spearman, 100 * j.near_best_share, 100 * j.mean_regret, 100 * j.worst_regret,
             100 * j.time_error);
}

void print_header() {
  fmt::print("{:<44} {:>6} {:>9} {:>10} {:>16} {:>12} {:>8} {:>10}\n", "model", "shapes", "mean rho", "median rho",
             "first pick <=2%", "mean regret", "worst", "time err");
}

// The first config a tune measures (the shortlist's #1) where the rows timed it.
void print_tune_first(const std::vector<std::pair<std::string, bench::TuneFirstJudgement>>& models) {
  fmt::print("\nthe first config a tune measures (the model's shortlist #1), where these rows timed it: within {:.0f}% "
             "of the best measured\n",
             100 * (bench::kNearBest - 1));
  fmt::print("{:<44} {:>6} {:>6} {:>11} {:>11}\n", "model", "shapes", "timed", "within 2%", "mean over");
  for (const auto& [label, j] : models)
    fmt::print("{:<44} {:>6} {:>6} {:>5} ({:>3.0f}%) {:>+10.2f}%\n", label, j.shapes, j.timed, j.near_best,
               j.timed > 0 ? 100.0 * j.near_best / j.timed : 0.0, j.timed > 0 ? 100 * (j.mean_ratio - 1) : 0.0);
}

void print_replays(int budget, const std::vector<std::pair<std::string, tile::LearnedModel>>& models,
                   const std::vector<tile::Measurement>& rows) {
  const int first = agent::TileProposerOptions{}.model_first;
  fmt::print("\nthe first {} picks among the measured configs, in the model's order (static, as tile tune) or, after "
             "the first {} in that order, refitted after each pick to the picks' times (online, the tile proposer's "
             "refit): best found over best measured\n",
             budget, first);
  fmt::print("{:<44} {:>6} {:>10} {:>10} {:>13} {:>13} {:>15}\n", "model", "shapes", "static", "online", "static <=2%",
             "online <=2%", "online / static");
  int too_few = 0;
  for (const auto& [label, model] : models) {
    const auto r = bench::replay_online(model, rows, budget, first);
    fmt::print("{:<44} {:>6} {:>9.4f}x {:>9.4f}x {:>12.0f}% {:>12.0f}% {:>7} / {:<7}\n", label, r.shapes, r.static_ratio,
               r.online_ratio, 100 * r.static_near, 100 * r.online_near, r.online_better, r.static_better);
    too_few = r.too_few;
  }
  // Said, as the shapes column then counts fewer shapes than the table above it.
  if (too_few > 0)
    fmt::print("({} {} fewer than {} measured configs, twice the picks: left out)\n", too_few,
               too_few == 1 ? "shape has" : "shapes have", 2 * budget);
}

// Pairs of one shape's measured configs that differ in one knob: the changes
// seen at least this often are listed.
constexpr int kMinKnobPairs = 10;

nlohmann::json knobs_json(const std::vector<bench::KnobChange>& knobs) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& k : knobs) out.push_back(bench::to_json(k));
  return out;
}

void print_knobs(const std::vector<bench::KnobChange>& knobs) {
  fmt::print("\none-knob pairs among each shape's measured configs (changes seen {} times or more): time(to) / "
             "time(from) - 1, geometric mean over the pairs\n",
             kMinKnobPairs);
  fmt::print("{:<10} {:>24} {:>6} {:>9} {:>9} {:>11} {:>15}\n", "knob", "from -> to", "pairs", "measured", "model",
             "analytical", "model's order");
  for (const auto& k : knobs)
    fmt::print("{:<10} {:>24} {:>6} {:>8.1f}% {:>8.1f}% {:>10.1f}% {:>14.0f}%\n", k.knob, k.from + " -> " + k.to,
               k.pairs, 100 * k.measured, 100 * k.predicted, 100 * k.analytical, 100 * k.agree);
  if (knobs.empty()) fmt::print("(none)\n");
}

// The rows of shapes whose weight family the model never saw, and how many
// were set aside. A model file that does not record its families keeps every row.
bench::FamilySplit held_out_of(const tile::LearnedModel& model, const std::vector<tile::Measurement>& rows,
                               const std::string& file) {
  if (!model.trained_families()) return {rows, 0, 0};
  auto out = bench::split_by_family(rows, *model.trained_families());
  if (out.held.empty())
    fail_bad_input(fmt::format("{} was trained on every shape family of these runs: nothing is held out to judge it on "
                               "(judge it on other runs, or leave out --model to cross-validate by family)",
                               file));
  return out;
}

// Each input judged by a model trained on the others (bench/model_sets.hpp);
// each read once, the kind picked over all of them as without --by-input.
void eval_by_input(const ModelArgs& a) {
  std::vector<bench::NamedRows> sets;
  std::vector<tile::Measurement> all;
  for (const auto& run : a.runs) {
    sets.push_back({run, bench::read_model_data({run}).rows});
    all.insert(all.end(), sets.back().rows.begin(), sets.back().rows.end());
  }
  const std::string kind = pick_kind(all, a.kind);
  for (auto& s : sets) s.rows = bench::of_kind(s.rows, kind);
  const tile::LearnedModel prior = load_prior(a.prior);
  const auto held = [&] {
    RoundsProgress progress(!a.no_progress, "tile model eval");
    return bench::hold_out_sets(sets, prior, progress.options(a.train), kind);
  }();
  if (a.json) {
    nlohmann::json j = nlohmann::json::array();
    for (const auto& h : held) j.push_back(bench::to_json(h));
    fmt::print("{}\n", j.dump(2));
    return;
  }
  fmt::print("each input judged by a model trained on the other inputs' {} measurements{}, on its shapes whose family "
             "(N x K) no other input holds\n",
             kind, prior.empty() ? "" : " (stacked on the prior)");
  for (const auto& h : held) {
    fmt::print("\n{}: {} measurements; {} set aside ({} shapes of families another input holds); its model learned "
               "from {}\n",
               h.name, h.rows, h.set_aside_rows, h.set_aside_shapes, h.train_rows);
    if (h.learned.shapes.empty()) {
      fmt::print("(nothing judged: no shape of a family only this input holds has {} configs or more)\n",
                 bench::kMinConfigs);
      continue;
    }
    if (h.prior_seen_shapes > 0)
      fmt::print("(the prior was trained on the families of {} of these shapes: there its figures, and the layer's "
                 "on it, are in-sample)\n",
                 h.prior_seen_shapes);
    print_header();
    print_row(h.analytical, "analytical");
    if (!h.prior.shapes.empty()) print_row(h.prior, "prior alone: " + prior.describe());
    print_row(h.learned, fmt::format("learned{} (the other inputs)", prior.empty() ? "" : " on the prior"));
  }
}

// --plot: the judged models' spread, shape by shape (bench/model_eval_chart.hpp),
// written before anything is printed, so that a plot that cannot be drawn is the
// command's one error, not one after a table.
void write_plot(const ModelArgs& a, const std::vector<bench::ChartedJudgement>& models) {
  if (!a.plot.empty()) atomic_write_file(a.plot, bench::model_eval_chart(models));
}

void say_plotted(const ModelArgs& a) {
  if (!a.plot.empty()) fmt::print("\nplotted rho and the first pick, shape by shape: {}\n", a.plot);
}

void cmd_eval(const ModelArgs& a) {
  if (!a.plot.empty()) require_extension(a.plot, ".svg", "--plot", "the plot is an SVG image");
  require_xgboost();
  if (a.by_input) return eval_by_input(a);
  const auto data = bench::read_model_data(paths(a.runs));
  const std::string kind = pick_kind(data.rows, a.kind);
  const auto rows = bench::of_kind(data.rows, kind);
  if (!a.model.empty()) {  // a trained model on shapes it never saw
    const tile::LearnedModel model = tile::LearnedModel::load(a.model);
    const auto split = held_out_of(model, rows, a.model);
    const auto& held = split.held;
    const auto learned = bench::judge_model(model, held), analytical = bench::judge_model(tile::LearnedModel{}, held);
    const auto knobs = a.knobs ? bench::knob_changes(model, held, kMinKnobPairs) : std::vector<bench::KnobChange>{};
    const auto first_analytical = bench::judge_tune_first(tile::LearnedModel{}, held);
    const auto first_learned = bench::judge_tune_first(model, held);
    write_plot(a, {{"analytical", &analytical}, {"the model file", &learned}});
    if (a.json) {
      nlohmann::json j{{"analytical", bench::to_json(analytical)},
                       {"model", bench::to_json(learned)},
                       {"tune_first", {{"analytical", bench::to_json(first_analytical)},
                                       {"model", bench::to_json(first_learned)}}},
                       {"set_aside", {{"measurements", split.set_aside_rows}, {"shapes", split.set_aside_shapes}}}};
      if (a.knobs) j["knobs"] = knobs_json(knobs);
      fmt::print("{}\n", j.dump(2));
      return;
    }
    fmt::print("{} measurements of {} on {} shapes; the model file {} judged on them\n", held.size(), kind,
               learned.shapes.size(), a.model);
    if (!model.trained_families())
      fmt::print("(the model file does not record what it was trained on: it must not have been trained on these runs)\n");
    else if (split.set_aside_rows > 0)
      fmt::print("set aside: {} measurements of {} shapes whose families (N x K) the model was trained on\n",
                 split.set_aside_rows, split.set_aside_shapes);
    print_header();
    print_row(analytical, "analytical");
    print_row(learned, model.describe());
    print_tune_first({{"analytical", first_analytical}, {model.describe(), first_learned}});
    if (a.online > 0) print_replays(a.online, {{"analytical", tile::LearnedModel{}}, {model.describe(), model}}, held);
    if (a.knobs) print_knobs(knobs);
    say_plotted(a);
    return;
  }
  const tile::LearnedModel prior = load_prior(a.prior);
  const auto cv = [&] {
    RoundsProgress progress(!a.no_progress, "tile model eval");
    return bench::cross_validate(rows, a.folds, prior, progress.options(a.train), kind);
  }();
  const auto knobs = a.knobs ? bench::knob_changes(cv.held_rows, cv.held_predicted_us, kMinKnobPairs)
                             : std::vector<bench::KnobChange>{};
  write_plot(a, {{"analytical", &cv.analytical}, {"prior alone", &cv.prior}, {"learned", &cv.learned}});
  if (a.json) {
    nlohmann::json j = bench::to_json(cv);
    if (a.knobs) j["knobs"] = knobs_json(knobs);
    fmt::print("{}\n", j.dump(2));
    return;
  }
  fmt::print("{} measurements of {} on {} shape families, {}-fold by family (each fold judged by a model that never "
             "saw it)\n",
             rows.size(), kind, cv.families, cv.folds);
  print_header();
  print_row(cv.analytical, "analytical");
  if (!cv.prior.shapes.empty()) print_row(cv.prior, "prior alone: " + prior.describe());
  print_row(cv.learned, fmt::format("learned{} (trained on the other folds)", prior.empty() ? "" : " on the prior"));
  if (a.knobs) print_knobs(knobs);
  say_plotted(a);
}

void add_common(CLI::App* cmd, ModelArgs& a) {
  cmd->add_option("runs", a.runs, "bench or search run folders (or folders holding them), or rows files (.jsonl)")->required();
  cmd->add_option("--device-kind", a.kind, "learn from this GPU kind's measurements (h200, h100, ...), or all: every kind's, pooled (default: the kind with most)");
  cmd->add_option("--prior", a.prior, "stack on this model: a device kind whose model is stored, or a model file");
  cmd->add_flag("--no-progress", a.no_progress, "no progress bar on stderr");
  cmd->add_option("--trees", a.train.trees, "boosting rounds")->capture_default_str()->check(CLI::Range(1, 5000));
  cmd->add_option("--max-depth", a.train.max_depth, "tree depth")->capture_default_str()->check(CLI::Range(1, 16));
  cmd->add_option("--learning-rate", a.train.learning_rate, "shrinkage per round")->capture_default_str()->check(CLI::Range(0.001, 1.0));
  cmd->add_option("--min-child-weight", a.train.min_child_weight, "least hessian weight in a leaf")->capture_default_str();
  a.train.reach = tile::kDefaultReach;
  cmd->add_option("--reach", a.train.reach, "with --prior: the new layers apply to shapes within this distance of one they learned from, in log2 of M, N and K (1: one of them twice or half as large); elsewhere the prior's prediction stands; 0: everywhere")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 64.0));
  a.train.pairs = tile::kDefaultPairs;
  cmd->add_option("--pairs", a.train.pairs, "a pair layer on top, which orders each shape's fastest configs by which of two is faster: pairs drawn per row (0: none)")
      ->capture_default_str()
      ->check(CLI::Range(0, 256));
  cmd->add_option("--pair-trees", a.train.pair_trees, "the pair layer's boosting rounds")->capture_default_str()->check(CLI::Range(1, 5000));
  cmd->add_option("--pair-max-depth", a.train.pair_max_depth, "the pair layer's tree depth")->capture_default_str()->check(CLI::Range(1, 16));
  cmd->add_option("--target", a.train.target, "what the trees fit: pairwise (the order of each shape's configs, then their level), residual (log2 measured / analytical), or blend (both side by side, averaged)")
      ->capture_default_str()
      ->transform(CLI::CheckedTransformer(std::map<std::string, tile::TrainOptions::Target>{
          {"residual", tile::TrainOptions::Target::residual},
          {"pairwise", tile::TrainOptions::Target::pairwise},
          {"blend", tile::TrainOptions::Target::blend}}));
}

}  // namespace

void add_model_command(CLI::App* tile) {
  auto a = std::make_shared<ModelArgs>();
  auto* model = tile->add_subcommand("model", "the learned cost model: train it on measurements, judge it on held-out shapes");
  model->require_subcommand(1);
  auto* train = model->add_subcommand("train", "fit the learned cost model and store it for the GPU's kind");
  add_common(train, *a);
  train->add_option("--out", a->out, "model file (default: <cache>/cost_models/<kind>.json)");
  train->callback([a] { cmd_train(*a); });
  auto* rows = model->add_subcommand("rows", "write the measurements train learns from to a file, a JSON line each");
  rows->add_option("runs", a->runs, "bench or search run folders (or folders holding them), or rows files (.jsonl)")->required();
  rows->add_option("--device-kind", a->kind, "only this GPU kind's measurements (h200, h100, ...; default: all)");
  rows->add_option("--out", a->out, "rows file (.jsonl)")->required();
  rows->callback([a] { cmd_rows(*a); });
  auto* features = model->add_subcommand(
      "features", "write the measurements with the features the model sees and its predictions, a CSV line each");
  features->add_option("runs", a->runs, "bench or search run folders (or folders holding them), or rows files (.jsonl)")->required();
  features->add_option("--device-kind", a->kind, "only this GPU kind's measurements (h200, h100, ...; default: all)");
  features->add_option("--model", a->model, "the learned model whose predictions fill model_us: a model file (.json), or a device kind: the model tile tune ranks with on it (default: none, the analytical model)");
  features->add_option("--out", a->out, "feature table (.csv)")->required();
  features->callback([a] { cmd_features(*a); });
  auto* eval = model->add_subcommand("eval", "judge the learned and analytical models on shape families held out");
  add_common(eval, *a);
  auto* folds = eval->add_option("--folds", a->folds, "folds of the family split")->capture_default_str()->check(CLI::Range(2, 50));
  eval->add_flag("--json", a->json, "print the judgement as JSON, shape by shape");
  auto* model_file = eval->add_option("--model", a->model, "judge this trained model file on the runs (held-out runs) instead of cross-validating");
  auto* online = eval->add_option("--online", a->online, "with --model: replay a search's refit over this many picks of each shape's measured configs")
      ->check(CLI::Range(1, 64));
  auto* by_input = eval->add_flag("--by-input", a->by_input, "leave one input out: judge each run folder or rows file by a model trained on the others, on its shapes of families they do not hold (does a model help on a set of shapes like none it learned from?)");
  auto* knobs = eval->add_flag("--knobs", a->knobs, "for each knob, the pairs of configs that differ in it alone, measured against predicted (by --model, or by each fold's model)");
  auto* plot = eval->add_option("--plot", a->plot, "also draw rho and the first pick of each model, shape by shape, into this SVG file");
  by_input->excludes(folds)->excludes(model_file)->excludes(online)->excludes(knobs)->excludes(plot);
  eval->callback([a] { cmd_eval(*a); });
}

}  // namespace tessera::cli
