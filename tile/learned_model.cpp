#include "tile/learned_model.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <mutex>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/fs.hpp"
#include "tile/cost_model.hpp"
#include "tile/features.hpp"
#ifdef TESSERA_HAVE_XGBOOST
#include "tile/detail/base64.hpp"
#include "tile/detail/xgboost.hpp"
#endif
#include "tile/detail/learned_layer.hpp"
#include "core/json_read.hpp"

namespace tessera::tile {

namespace {

// 2: each layer's trees as XGBoost's UBJSON in base64 ("booster_ubj"); 1 had
// them as XGBoost's JSON ("booster"), three times the work to read (a second for
// the shipped H200 model). Both are read; 2 is written.
constexpr const char* kSchema = "tessera.cost_model/2";
constexpr const char* kSchemaJsonTrees = "tessera.cost_model/1";

std::string limits_kind_check(const nlohmann::json& j, const char* key) {
  if (!j.contains(key) || !j.at(key).is_string()) fail_bad_input(fmt::format("a measurement needs a string '{}'", key));
  return j.at(key).get<std::string>();
}

// One of a row's device limits: absent keeps the default; present, a number
// in [lo, hi]. A zero SM count or peak would make the features infinite (the
// trainer then fails deep in XGBoost), and a negative one trains on nonsense.
template <typename T>
T row_limit(const nlohmann::json& limits, const char* key, T fallback, double lo, double hi) {
  if (!limits.contains(key)) return fallback;
  const nlohmann::json& v = limits.at(key);
  if (!v.is_number()) fail_bad_input(fmt::format("a measurement's limits.{} must be a number", key));
  const double d = v.get<double>();
  if (!(d >= lo && d <= hi)) fail_bad_input(fmt::format("a measurement's limits.{} = {} is outside [{}, {}]", key, d, lo, hi));
  return static_cast<T>(d);
}

}  // namespace

nlohmann::json to_json(const Measurement& m) {
  return {{"task", tessera::to_json(m.task)},
          {"config", name(m.config)},  // its name: a row in a few hundred bytes (parse_name reads it back)
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
  m.config = j.at("config").is_string() ? parse_name(j.at("config").get<std::string>()) : from_json(j.at("config"));
  m.device_kind = limits_kind_check(j, "device_kind");
  if (!j.contains("cold_us") || !j.at("cold_us").is_number()) fail_bad_input("a measurement needs a number 'cold_us'");
  m.cold_us = j.at("cold_us").get<double>();
  const nlohmann::json l = j.contains("limits") ? j.at("limits") : nlohmann::json::object();
  if (!l.is_object()) fail_bad_input("a measurement's 'limits' must be a JSON object");
  if (l.contains("arch")) {
    if (!l.at("arch").is_string()) fail_bad_input("a measurement's limits.arch must be a string");
    m.limits.arch = l.at("arch").get<std::string>();
  }
  m.limits.sm_count = row_limit(l, "sm_count", m.limits.sm_count, 1, 1e5);
  m.limits.smem_optin_bytes = row_limit(l, "smem_optin_bytes", m.limits.smem_optin_bytes, 1, 1 << 30);
  m.limits.peak_tflops = row_limit(l, "peak_tflops", m.limits.peak_tflops, 1e-3, 1e6);
  m.limits.l2_bytes = row_limit(l, "l2_bytes", m.limits.l2_bytes, 1, 1e12);
  m.limits.sm_clock_mhz = row_limit(l, "sm_clock_mhz", m.limits.sm_clock_mhz, 1, 1e5);
  // As the GPU ranks it today, so that `tile model eval` and `features` judge a
  // shape's rows at one peak, and train fits what ranking will ask of it.
  m.limits = at_kind_peak(m.limits);
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

namespace detail {

void unavailable() {
  throw Error(Error::Kind::unavailable,
              "this tessera was built without XGBoost: the learned cost model is unavailable (install libxgboost-dev "
              "and build again; docs/tile.md, \"The learned cost model\")");
}

std::size_t feature_index(const char* name) {
  const auto& names = feature_names();
  return std::size_t(std::find(names.begin(), names.end(), name) - names.begin());
}

double log2_analytical(std::span<const float> row) {
  static const std::size_t i = feature_index("log2_pred_us");
  return row[i];
}

// A level layer sees the shape and the device, every other column constant.
std::vector<float> level_view(const std::vector<float>& flat, std::size_t ncol) {
  static const std::vector<std::size_t> kept = [] {
    std::vector<std::size_t> v;
    for (const char* name : {"log2_m", "log2_n", "log2_k", "layout_nn", "epilogue", "log2_flops", "sm_count",
                             "log2_peak_tflops"})
      v.push_back(feature_index(name));
    return v;
  }();
  std::vector<float> out(flat.size(), 0.0f);
  for (std::size_t r = 0; r < flat.size() / ncol; ++r)
    for (const std::size_t c : kept) out[r * ncol + c] = flat[r * ncol + c];
  return out;
}

std::vector<float> pair_rows(const std::vector<float>& flat, std::size_t ncol,
                             const std::vector<std::pair<std::size_t, std::size_t>>& pairs) {
  std::vector<float> out(pairs.size() * 2 * ncol);
  float* o = out.data();
  for (const auto& [i, j] : pairs) {
    const float* a = flat.data() + i * ncol;
    const float* b = flat.data() + j * ncol;
    for (std::size_t c = 0; c < ncol; ++c) o[c] = a[c], o[ncol + c] = b[c] - a[c];
    o += 2 * ncol;
  }
  return out;
}

}  // namespace detail

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

bool LearnedModel::empty() const { return layers_.empty(); }

const std::optional<std::set<std::string>>& LearnedModel::trained_families() const { return families_; }

std::string weight_family(const Task& t) { return fmt::format("{}x{}", t.n, t.k); }

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
    if ((*it)->role != detail::Role::level && (*it)->role != detail::Role::blend &&
        (*it)->role != detail::Role::pairs)  // parts of the ranking layer's model
      s += fmt::format("{}{} ({} rows{})", s.empty() ? "learned " : " on ", (*it)->device_kind, (*it)->rows,
                       (*it)->reach ? fmt::format(", reach {:g}", (*it)->reach->radius) : "");
  return has_pairs() ? s + ", pairs" : s;
}

bool LearnedModel::has_pairs() const {
  return std::any_of(layers_.begin(), layers_.end(), [](const auto& l) { return l->role == detail::Role::pairs; });
}

namespace {

// Rows of features, row-major in one vector (what XGBoost's matrices take).
std::vector<float> flattened(const std::vector<std::vector<float>>& rows) {
  std::vector<float> flat;
  flat.reserve(rows.size() * (rows.empty() ? 0 : rows.front().size()));
  for (const auto& r : rows) flat.insert(flat.end(), r.begin(), r.end());
  return flat;
}

}  // namespace

std::vector<double> LearnedModel::residuals(const std::vector<std::vector<float>>& rows) const {
  if (layers_.empty() || rows.empty()) return std::vector<double>(rows.size(), 0.0);
  return residuals(flattened(rows), rows.front().size());
}

std::vector<double> LearnedModel::residuals(const std::vector<float>& flat, std::size_t ncol, std::size_t count) const {
  const std::size_t n = ncol > 0 ? flat.size() / ncol : 0;
  std::vector<double> out(n, 0.0);
  if (layers_.empty() || n == 0) return out;
#ifdef TESSERA_HAVE_XGBOOST
  const detail::DMatrix data(flat, n, ncol);
  std::unique_ptr<detail::DMatrix> level;
  std::vector<double> before_ranking;  // what a blend layer averages its branch with
  const detail::Reach* reach = nullptr;  // the rows within it (one training's layers share one)
  std::vector<char> inside;
  for (std::size_t k = 0; k < std::min(count, layers_.size()); ++k) {
    const auto& layer = layers_[k];
    if (layer->role == detail::Role::pairs) continue;  // an order, not a time: shape_residuals()
    if (layer->role == detail::Role::level && !level)
      level = std::make_unique<detail::DMatrix>(detail::level_view(flat, ncol), n, ncol);
    if (layer->role == detail::Role::ranking) before_ranking = out;
    if (layer->reach && layer->reach.get() != reach)
      reach = layer->reach.get(), inside = detail::within(*reach, flat, ncol);
    std::lock_guard g(layer->mu);
    const auto m = layer->booster->margins(layer->role == detail::Role::level ? *level : data);
    for (std::size_t i = 0; i < n; ++i) {
      if (layer->reach && !inside[i]) continue;  // beyond the shapes it learned from: the prior's prediction stands
      switch (layer->role) {
        case detail::Role::residual:
        case detail::Role::level:
          out[i] += m[i];
          break;
        case detail::Role::ranking: {
          const double analytical = detail::log2_analytical({flat.data() + i * ncol, ncol});
          out[i] = layer->a * (analytical + out[i] - m[i]) - analytical;
          break;
        }
        case detail::Role::blend:
          out[i] = (1 - layer->a) * out[i] + layer->a * (before_ranking.empty() ? out[i] : before_ranking[i] + m[i]);
          break;
        case detail::Role::pairs:
          break;
      }
    }
  }
#endif
  return out;
}

std::vector<double> LearnedModel::shape_residuals(const std::vector<std::vector<float>>& rows) const {
  // The last pair layer: a search's refit stacks on a model that has one.
  const auto last = std::find_if(layers_.rbegin(), layers_.rend(), [](const auto& l) { return l->role == detail::Role::pairs; });
  if (last == layers_.rend() || rows.size() < 2) return residuals(rows);
  const std::size_t ncol = rows.front().size();
  const std::vector<float> flat = flattened(rows);
  std::vector<double> out = residuals(flat, ncol);
#ifdef TESSERA_HAVE_XGBOOST
  const Layer& layer = **last;
  // One shape: inside the layer's reach or not, as its first row is.
  if (layer.reach && !detail::within(*layer.reach, rows.front(), ncol).front()) return out;
  // The layers under it (all of them but the pair layer when it is the last,
  // as trained), and what the layers over it add.
  const std::size_t below = std::size_t(layers_.rend() - last - 1);
  const std::vector<double> under = last == layers_.rbegin() ? out : residuals(flat, ncol, below);
  std::vector<double> over(out.size());
  for (std::size_t i = 0; i < out.size(); ++i) over[i] = out[i] - under[i];
  // The fastest kPairReorder by the layers under it, and their log times.
  std::vector<double> log2_us(rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) log2_us[i] = detail::log2_analytical(rows[i]) + under[i];
  std::vector<std::size_t> top(rows.size());
  for (std::size_t i = 0; i < top.size(); ++i) top[i] = i;
  std::stable_sort(top.begin(), top.end(), [&](std::size_t a, std::size_t b) { return log2_us[a] < log2_us[b]; });
  top.resize(std::min(top.size(), kPairReorder));
  std::vector<std::pair<std::size_t, std::size_t>> pairs;
  for (const std::size_t i : top)
    for (const std::size_t j : top)
      if (i != j) pairs.emplace_back(i, j);
  const detail::DMatrix data(detail::pair_rows(flat, ncol, pairs), pairs.size(), 2 * ncol);
  std::vector<float> m;
  {
    std::lock_guard g(layer.mu);
    m = layer.booster->margins(data);
  }
  // Each config's mean log-odds of beating the others; the times, sorted, handed out in that order.
  std::vector<double> score(top.size(), 0.0);
  for (std::size_t a = 0; a < top.size(); ++a)
    for (std::size_t b = 0; b + 1 < top.size(); ++b) score[a] += m[a * (top.size() - 1) + b];
  std::vector<std::size_t> order(top.size());
  for (std::size_t k = 0; k < order.size(); ++k) order[k] = k;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return score[a] > score[b]; });
  for (std::size_t k = 0; k < order.size(); ++k) {
    const std::size_t i = top[order[k]];
    out[i] = log2_us[top[k]] - detail::log2_analytical(rows[i]) + over[i];  // top[k]: the k-th fastest time
  }
#endif
  return out;
}

double LearnedModel::predict_us(const Config& c, const Task& t, const Limits& l) const {
  const Prediction p = predict(c, t, l);
  if (layers_.empty()) return p.time_us;
  return p.time_us * std::exp2(residuals({features(c, t, l, p)}).front());
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
                      {"booster_ubj", detail::base64_encode(l->booster->save_ubj())}});
    if (l->reach) layers.back()["reach"] = detail::to_json(*l->reach);
  }
#endif
  nlohmann::json j = {{"schema", kSchema}, {"features", feature_names()}, {"layers", layers}};
  if (families_) j["trained_families"] = *families_;
  return j;
}

LearnedModel LearnedModel::from_json(const nlohmann::json& j) {
  if (!j.is_object() || (j.value("schema", "") != kSchema && j.value("schema", "") != kSchemaJsonTrees))
    fail_bad_input(fmt::format("not a tessera cost model (schema '{}' expected)", kSchema));
  if (j.value("features", nlohmann::json::array()) != nlohmann::json(feature_names()))
    fail_bad_input("the cost model was trained on another feature set; train it again (tessera tile model train)");
#ifndef TESSERA_HAVE_XGBOOST
  detail::unavailable();
#else
  LearnedModel m;
  for (const auto& l : j.at("layers")) {
    auto layer = std::make_shared<Layer>();
    layer->device_kind = l.at("device_kind").get<std::string>();
    layer->rows = integer_of<int>(l.at("rows"), "rows");
    layer->options = l.value("options", nlohmann::json::object());
    const int role = integer_value<int>(l, "role", 0);
    if (role < int(detail::Role::residual) || role > int(detail::Role::pairs))
      fail_bad_input(fmt::format("cost model layer role {} is not one this tessera knows; train the model again", role));
    layer->role = detail::Role(role);
    if (layer->role == detail::Role::blend &&
        std::none_of(m.layers_.begin(), m.layers_.end(), [](const auto& x) { return x->role == detail::Role::ranking; }))
      fail_bad_input("a blend layer of the cost model has no ranking layer under it; train the model again");
    layer->a = l.value("a", 1.0);
    if (l.contains("reach")) {  // the layers of one training share theirs (residuals() tests each reach once)
      auto reach = detail::reach_from_json(l.at("reach"));
      const auto& below = m.layers_.empty() ? nullptr : m.layers_.back()->reach;
      layer->reach = below && below->radius == reach.radius && below->shapes == reach.shapes
                         ? below
                         : std::make_shared<const detail::Reach>(std::move(reach));
    }
    layer->booster = std::make_unique<detail::Booster>();
    if (const auto ubj = l.find("booster_ubj"); ubj != l.end()) {
      if (!ubj->is_string()) fail_bad_input("a cost model layer's booster_ubj must be a string (base64)");
      layer->booster->load(detail::base64_decode(ubj->get_ref<const std::string&>()));
    } else {
      layer->booster->load(l.at("booster").dump());
    }
    m.layers_.push_back(std::move(layer));
  }
  // Files written before the model kept its training families: unknown.
  if (j.contains("trained_families")) m.families_ = j.at("trained_families").get<std::set<std::string>>();
  else m.families_.reset();
  return m;
#endif
}

void LearnedModel::save(const std::filesystem::path& file) const {
  atomic_write_file(file, to_json().dump());  // makes the file's folder when it names one
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

}  // namespace tessera::tile
