#include "tile/learned_model.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <mutex>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "core/error.hpp"
#include "core/fs.hpp"
#include "tile/cost_model.hpp"
#include "tile/features.hpp"
#ifdef TESSERA_HAVE_XGBOOST
#include "tile/detail/xgboost.hpp"
#endif

namespace tessera::tile {

namespace {

constexpr const char* kSchema = "tessera.cost_model/1";
constexpr int kTrainThreads = 1;  // small data: threads cost more than they save, and one is deterministic

std::string limits_kind_check(const nlohmann::json& j, const char* key) {
  if (!j.contains(key) || !j.at(key).is_string()) fail_bad_input(fmt::format("a measurement needs a string '{}'", key));
  return j.at(key).get<std::string>();
}

}  // namespace

nlohmann::json to_json(const Measurement& m) {
  return {{"task", tessera::to_json(m.task)},
          {"config", tile::to_json(m.config)},
          {"device_kind", m.device_kind},
          {"limits",
           {{"arch", m.limits.arch},
            {"sm_count", m.limits.sm_count},
            {"smem_optin_bytes", m.limits.smem_optin_bytes},
            {"peak_tflops", m.limits.peak_tflops},
            {"l2_bytes", m.limits.l2_bytes},
            {"sm_clock_mhz", m.limits.sm_clock_mhz}}},
          {"cold_us", m.cold_us}};
}

Measurement measurement_from_json(const nlohmann::json& j) {
  if (!j.is_object()) fail_bad_input("a measurement is a JSON object");
  Measurement m;
  if (!j.contains("task") || !j.contains("config")) fail_bad_input("a measurement needs 'task' and 'config'");
  m.task = parse_task(j.at("task"));
  m.config = from_json(j.at("config"));
  m.device_kind = limits_kind_check(j, "device_kind");
  if (!j.contains("cold_us") || !j.at("cold_us").is_number()) fail_bad_input("a measurement needs a number 'cold_us'");
  m.cold_us = j.at("cold_us").get<double>();
  const auto l = j.value("limits", nlohmann::json::object());
  m.limits.arch = l.value("arch", m.limits.arch);
  m.limits.sm_count = l.value("sm_count", m.limits.sm_count);
  m.limits.smem_optin_bytes = l.value("smem_optin_bytes", m.limits.smem_optin_bytes);
  m.limits.peak_tflops = l.value("peak_tflops", m.limits.peak_tflops);
  m.limits.l2_bytes = l.value("l2_bytes", m.limits.l2_bytes);
  m.limits.sm_clock_mhz = l.value("sm_clock_mhz", m.limits.sm_clock_mhz);
  return m;
}

std::string device_kind(std::string_view gpu_name) {
  // The first word that starts with a letter and holds a digit: "H200",
  // "H100", "A100", "L40S", "B200" (not "NVIDIA", "80GB" or "HBM3" after it).
  std::string word;
  const auto take = [&]() -> bool {
    const bool letter_first = !word.empty() && std::isalpha(static_cast<unsigned char>(word[0]));
    const bool digit = std::any_of(word.begin(), word.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
    return letter_first && digit && word.size() <= 6;
  };
  for (std::size_t i = 0; i <= gpu_name.size(); ++i) {
    const char c = i < gpu_name.size() ? gpu_name[i] : ' ';
    if (std::isalnum(static_cast<unsigned char>(c))) {
      word.push_back(char(std::tolower(static_cast<unsigned char>(c))));
      continue;
    }
    if (take()) return word;
    word.clear();
  }
  return "unknown";
}

TrainOptions online_train_options() {
  TrainOptions o;
  // One task's rows: one shape, whose level the search has measured, so the
  // times themselves are what to correct.
  o.target = TrainOptions::Target::residual;
  // Replayed on held-out grid records (tessera tile model eval --online K,
  // docs/tile.md), 40 trees of depth 3 at 0.3 made the shipped model's
  // first 4 picks worse than its static order; these were neutral on it and
  // kept most of what refitting gives the analytical model.
  o.trees = 20;
  o.max_depth = 2;
  o.learning_rate = 0.1;
  o.min_child_weight = 1;
  o.l2 = 1.0;
  return o;
}

// What a layer's trees fit, and so how their output counts.
enum class Role {
  residual,  // log2(measured / below): added as it is
  ranking,   // rank:pairwise within each shape, larger for faster: subtracted. Its level per shape is the
             // ranking loss's, not a time's: a level layer follows it
  level,     // log2(measured / below) from the shape's and device's features only: one constant per shape,
             // which puts the times back at their level and cannot change their order
};

struct LearnedModel::Layer {
  std::string device_kind;
  int rows = 0;
  Role role = Role::residual;
  // A ranking layer's corrected log time is T = log2(analytical) + below - f
  // (f its trees' output); its spread is the ranking loss's. a, fitted by
  // least squares within each shape at training, brings it to the measured
  // spread: the layer adds a T - log2(analytical) - below. Any a > 0 keeps the
  // order.
  double a = 1;
  nlohmann::json options;
#ifdef TESSERA_HAVE_XGBOOST
  std::unique_ptr<detail::Booster> booster;
  mutable std::mutex mu;  // XGBoost's predict is not documented thread-safe on one booster
#endif
};

namespace {

constexpr int kShapeColumns[] = {0, 1, 2, 3, 4, 5};  // log2 m, n, k, layout, epilogue, log2 FLOPs (features.cpp)

std::size_t feature_index(const char* name) {
  const auto& names = feature_names();
  return std::size_t(std::find(names.begin(), names.end(), name) - names.begin());
}

double log2_analytical(const std::vector<float>& f) {
  static const std::size_t i = feature_index("log2_pred_us");
  return f[i];
}

// A level layer sees the shape and the device, every other column constant.
std::vector<float> level_view(const std::vector<float>& flat, std::size_t ncol) {
  static const std::size_t sms = feature_index("sm_count"), peak = feature_index("log2_peak_tflops");
  std::vector<float> out(flat.size(), 0.0f);
  for (std::size_t r = 0; r < flat.size() / ncol; ++r) {
    for (const int c : kShapeColumns) out[r * ncol + std::size_t(c)] = flat[r * ncol + std::size_t(c)];
    out[r * ncol + sms] = flat[r * ncol + sms];
    out[r * ncol + peak] = flat[r * ncol + peak];
  }
  return out;
}

}  // namespace

LearnedModel::LearnedModel() = default;
LearnedModel::~LearnedModel() = default;
LearnedModel::LearnedModel(const LearnedModel&) = default;
LearnedModel& LearnedModel::operator=(const LearnedModel&) = default;

bool LearnedModel::available() {
#ifdef TESSERA_HAVE_XGBOOST
  return true;
#else
  return false;
#endif
}

namespace {

#ifndef TESSERA_HAVE_XGBOOST
[[noreturn]] void unavailable() {
  throw Error(Error::Kind::unavailable,
              "this tessera was built without XGBoost: the learned cost model is unavailable (install libxgboost-dev "
              "and build again; docs/tile.md, \"The learned cost model\")");
}
#endif

}  // namespace

bool LearnedModel::empty() const { return layers_.empty(); }

const std::string& LearnedModel::device_kind() const {
  static const std::string none = "analytical";
  return layers_.empty() ? none : layers_.back()->device_kind;
}

int LearnedModel::rows() const {
  int n = 0;
  for (const auto& l : layers_) n += l->rows;
  return n;
}

std::string LearnedModel::describe() const {
  if (layers_.empty()) return "analytical";
  std::string s;
  for (auto it = layers_.rbegin(); it != layers_.rend(); ++it)
    if ((*it)->role != Role::level)  // the level layer is its ranking layer's second half
    s += fmt::format("{}{} ({} rows)", s.empty() ? "learned " : " on ", (*it)->device_kind, (*it)->rows);
  return s;
}

std::vector<double> LearnedModel::residuals(const std::vector<std::vector<float>>& rows) const {
  std::vector<double> out(rows.size(), 0.0);
  if (layers_.empty() || rows.empty()) return out;
#ifdef TESSERA_HAVE_XGBOOST
  const std::size_t ncol = rows.front().size();
  std::vector<float> flat;
  flat.reserve(rows.size() * ncol);
  for (const auto& r : rows) flat.insert(flat.end(), r.begin(), r.end());
  const detail::DMatrix data(flat, rows.size(), ncol);
  std::unique_ptr<detail::DMatrix> level;
  for (const auto& layer : layers_) {
    if (layer->role == Role::level && !level) level = std::make_unique<detail::DMatrix>(level_view(flat, ncol), rows.size(), ncol);
    std::lock_guard g(layer->mu);
    const auto m = layer->booster->margins(layer->role == Role::level ? *level : data);
    for (std::size_t i = 0; i < out.size(); ++i) {
      if (layer->role != Role::ranking) {
        out[i] += m[i];
        continue;
      }
      const double analytical = log2_analytical(rows[i]);
      out[i] = layer->a * (analytical + out[i] - m[i]) - analytical;
    }
  }
#endif
  return out;
}

double LearnedModel::predict_us(const Config& c, const Task& t, const Limits& l) const {
  const Prediction p = predict(c, t, l);
  if (layers_.empty()) return p.time_us;
  return p.time_us * std::exp2(residuals({features(c, t, l, p)}).front());
}

#ifdef TESSERA_HAVE_XGBOOST
namespace {

// Training rows grouped by shape (and device), consecutive: the ranking
// objective wants each query's rows together.
struct Rows {
  std::vector<float> flat;  // features, row-major
  std::size_t n = 0, ncol = 0;
  std::vector<float> log2_residual;  // log2(measured / analytical)
  std::vector<unsigned> groups;      // rows per shape, in order
};

Rows rows_of(const std::vector<Measurement>& in) {
  std::vector<const Measurement*> kept;
  for (const auto& m : in)
    if (m.cold_us > 0) kept.push_back(&m);
  if (kept.empty()) fail_bad_input("no measurement with a time to learn from");
  const auto key = [](const Measurement* m) { return m->device_kind + "/" + m->task.id(); };
  std::stable_sort(kept.begin(), kept.end(), [&](auto* a, auto* b) { return key(a) < key(b); });
  Rows r;
  for (std::size_t i = 0; i < kept.size(); ++i) {
    const Measurement& m = *kept[i];
    const Prediction p = predict(m.config, m.task, m.limits);
    const auto f = features(m.config, m.task, m.limits, p);
    r.flat.insert(r.flat.end(), f.begin(), f.end());
    r.ncol = f.size();
    r.log2_residual.push_back(float(std::log2(m.cold_us / p.time_us)));
    if (i == 0 || key(kept[i - 1]) != key(kept[i])) r.groups.push_back(0);
    ++r.groups.back();
  }
  r.n = kept.size();
  return r;
}

// The slope, within shapes, of log2(measured) on a ranking layer's T (see
// Layer::a). 1 when the data cannot say (one config per shape, or a slope that
// is not positive, which would reverse the order).
double spread(const Rows& r, const std::vector<double>& below, const std::vector<float>& trees) {
  static const std::size_t analytical = feature_index("log2_pred_us");
  double num = 0, den = 0;
  std::size_t row = 0;
  for (const unsigned n : r.groups) {
    double mt = 0, my = 0;
    std::vector<double> t(n), y(n);
    for (std::size_t k = 0; k < n; ++k) {
      const std::size_t i = row + k;
      const double log2_analytical = r.flat[i * r.ncol + analytical];
      t[k] = log2_analytical + below[i] - trees[i];
      y[k] = r.log2_residual[i] + log2_analytical;  // log2(measured)
      mt += t[k] / n, my += y[k] / n;
    }
    for (std::size_t k = 0; k < n; ++k) num += (t[k] - mt) * (y[k] - my), den += (t[k] - mt) * (t[k] - mt);
    row += n;
  }
  const double a = den > 0 ? num / den : 1;
  return std::isfinite(a) && a > 0 ? a : 1;
}

std::shared_ptr<LearnedModel::Layer> fit_layer(const Rows& r, const std::vector<double>& below, Role role,
                                               const TrainOptions& o, const std::string& kind) {
  std::vector<float> label(r.n), margin(r.n);
  for (std::size_t i = 0; i < r.n; ++i) {
    label[i] = r.log2_residual[i];
    margin[i] = float(below[i]);
    // rank:pairwise puts larger labels and scores first: both are minus what
    // they would be for a time.
    if (role == Role::ranking) label[i] = -label[i], margin[i] = -margin[i];
  }
  // A ranking label orders one shape's configs by measured time: minus
  // log2(measured / analytical) would order them by the analytical model's
  // error instead. The base margin is the analytical time's log plus what
  // the layers below add, negated, so the scores rank the corrected times.
  // (The per-shape level the ranking leaves free is the level layer's.)
  std::vector<float> flat = role == Role::level ? level_view(r.flat, r.ncol) : r.flat;
  if (role == Role::ranking) {
    static const std::size_t analytical = feature_index("log2_pred_us");
    for (std::size_t i = 0; i < r.n; ++i) {
      label[i] -= r.flat[i * r.ncol + analytical];
      margin[i] -= r.flat[i * r.ncol + analytical];
    }
  }
  detail::DMatrix train(flat, r.n, r.ncol);
  train.set("label", label);
  train.set("base_margin", margin);
  if (role == Role::ranking) train.set_groups(r.groups);

  auto layer = std::make_shared<LearnedModel::Layer>();
  layer->device_kind = kind;
  layer->rows = role == Role::level ? 0 : int(r.n);  // the rows are counted once per model
  layer->role = role;
  layer->options = {{"role", int(role)}, {"trees", o.trees}, {"max_depth", o.max_depth},
                    {"learning_rate", o.learning_rate}, {"min_child_weight", o.min_child_weight}, {"l2", o.l2}};
  layer->booster = std::make_unique<detail::Booster>(train);
  auto& b = *layer->booster;
  b.set("objective", role == Role::ranking ? "rank:pairwise" : "reg:squarederror");
  b.set("base_score", "0");  // the margin is the layers below plus this layer's: nothing else
  b.set("tree_method", "exact");
  b.set("max_depth", std::to_string(o.max_depth));
  b.set("eta", fmt::format("{}", o.learning_rate));
  b.set("min_child_weight", fmt::format("{}", o.min_child_weight));
  b.set("lambda", fmt::format("{}", o.l2));
  b.set("nthread", std::to_string(kTrainThreads));
  b.set("seed", "0");
  b.set("verbosity", "0");
  for (int i = 0; i < o.trees; ++i) b.update(i, train);
  if (role == Role::ranking) layer->a = spread(r, below, b.margins(detail::DMatrix(flat, r.n, r.ncol)));
  return layer;
}

}  // namespace
#endif

LearnedModel LearnedModel::train(const std::vector<Measurement>& rows, const LearnedModel& prior,
                                 const TrainOptions& o, std::string kind) {
#ifndef TESSERA_HAVE_XGBOOST
  (void)rows, (void)prior, (void)o, (void)kind;
  unavailable();
#else
  const Rows r = rows_of(rows);
  std::vector<std::vector<float>> x(r.n);
  for (std::size_t i = 0; i < r.n; ++i) x[i].assign(r.flat.begin() + long(i * r.ncol), r.flat.begin() + long((i + 1) * r.ncol));
  LearnedModel out = prior;
  if (o.target == TrainOptions::Target::residual) {
    out.layers_.push_back(fit_layer(r, prior.residuals(x), Role::residual, o, kind));
    return out;
  }
  out.layers_.push_back(fit_layer(r, prior.residuals(x), Role::ranking, o, kind));
  out.layers_.push_back(fit_layer(r, out.residuals(x), Role::level, o, kind));
  return out;
#endif
}

nlohmann::json LearnedModel::to_json() const {
  nlohmann::json layers = nlohmann::json::array();
#ifdef TESSERA_HAVE_XGBOOST
  for (const auto& l : layers_) {
    std::lock_guard g(l->mu);
    layers.push_back({{"device_kind", l->device_kind},
                      {"rows", l->rows},
                      {"role", int(l->role)},
                      {"a", l->a},
                      {"options", l->options},
                      {"booster", nlohmann::json::parse(l->booster->save_json())}});
  }
#endif
  return {{"schema", kSchema}, {"features", feature_names()}, {"layers", layers}};
}

LearnedModel LearnedModel::from_json(const nlohmann::json& j) {
  if (!j.is_object() || j.value("schema", "") != kSchema)
    fail_bad_input(fmt::format("not a tessera cost model (schema '{}' expected)", kSchema));
  if (j.value("features", nlohmann::json::array()) != nlohmann::json(feature_names()))
    fail_bad_input("the cost model was trained on another feature set; train it again (tessera tile model train)");
#ifndef TESSERA_HAVE_XGBOOST
  unavailable();
#else
  LearnedModel m;
  for (const auto& l : j.at("layers")) {
    auto layer = std::make_shared<Layer>();
    layer->device_kind = l.at("device_kind").get<std::string>();
    layer->rows = l.at("rows").get<int>();
    layer->options = l.value("options", nlohmann::json::object());
    const int role = l.value("role", 0);
    if (role < int(Role::residual) || role > int(Role::level))
      fail_bad_input(fmt::format("cost model layer role {} is not one this tessera knows; train the model again", role));
    layer->role = Role(role);
    layer->a = l.value("a", 1.0);
    layer->booster = std::make_unique<detail::Booster>();
    layer->booster->load_json(l.at("booster").dump());
    m.layers_.push_back(std::move(layer));
  }
  return m;
#endif
}

void LearnedModel::save(const std::filesystem::path& file) const {
  std::filesystem::create_directories(file.parent_path());
  atomic_write_file(file, to_json().dump());
}

LearnedModel LearnedModel::load(const std::filesystem::path& file) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(read_file(file));
  } catch (const nlohmann::json::exception& e) {
    fail_bad_input(fmt::format("{}: not JSON: {}", file.string(), e.what()));
  }
  return from_json(j);
}

namespace {

std::vector<std::filesystem::path> model_dirs() {
  std::vector<std::filesystem::path> dirs = {cache_dir() / "cost_models"};
  if (const char* d = std::getenv("TESSERA_COST_MODEL_DIR"); d && *d) dirs.emplace_back(d);
#ifdef TESSERA_COST_MODEL_DIR_DEFAULT
  dirs.emplace_back(TESSERA_COST_MODEL_DIR_DEFAULT);
#endif
  return dirs;
}

}  // namespace

std::filesystem::path stored_model_path(const std::string& kind) {
  if (const char* f = std::getenv("TESSERA_COST_MODEL"); f && *f) return f;
  std::error_code ec;
  for (const auto& d : model_dirs())
    if (std::filesystem::exists(d / (kind + ".json"), ec)) return d / (kind + ".json");
  return {};
}

LearnedModel model_for_device(const std::string& kind) {
  if (!LearnedModel::available()) return {};
  const auto try_load = [](const std::filesystem::path& p) -> LearnedModel {
    try {
      return LearnedModel::load(p);
    } catch (const std::exception& e) {
      spdlog::warn("cost model {} not used: {}", p.string(), e.what());
      return {};
    }
  };
  if (const auto own = stored_model_path(kind); !own.empty()) return try_load(own);
  if (const auto pooled = stored_model_path(kEveryKind); !pooled.empty()) return try_load(pooled);
  // No model of this kind: another kind's, as the prior a search adapts from
  // its first measurements. The one trained on most rows.
  LearnedModel best;
  std::error_code ec;
  for (const auto& d : model_dirs()) {
    if (!std::filesystem::is_directory(d, ec)) continue;
    for (const auto& e : std::filesystem::directory_iterator(d, ec)) {
      if (e.path().extension() != ".json") continue;
      LearnedModel m = try_load(e.path());
      if (!m.empty() && m.rows() > best.rows()) best = std::move(m);
    }
  }
  return best;
}

}  // namespace tessera::tile
