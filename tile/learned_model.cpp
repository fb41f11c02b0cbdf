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
  o.trees = 40;
  o.max_depth = 3;
  o.learning_rate = 0.3;
  o.min_child_weight = 1;
  o.l2 = 1.0;
  return o;
}

struct LearnedModel::Layer {
  std::string device_kind;
  int rows = 0;
  nlohmann::json options;
#ifdef TESSERA_HAVE_XGBOOST
  std::unique_ptr<detail::Booster> booster;
  mutable std::mutex mu;  // XGBoost's predict is not documented thread-safe on one booster
#endif
};

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

[[noreturn]] void unavailable() {
  throw Error(Error::Kind::unavailable,
              "this tessera was built without XGBoost: the learned cost model is unavailable (install libxgboost-dev "
              "and build again; docs/tile.md, \"The learned cost model\")");
}

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
  for (const auto& layer : layers_) {
    std::lock_guard g(layer->mu);
    const auto m = layer->booster->margins(data);
    for (std::size_t i = 0; i < out.size(); ++i) out[i] += m[i];
  }
#endif
  return out;
}

double LearnedModel::predict_us(const Config& c, const Task& t, const Limits& l) const {
  const Prediction p = predict(c, t, l);
  if (layers_.empty()) return p.time_us;
  return p.time_us * std::exp2(residuals({features(c, t, l, p)}).front());
}

LearnedModel LearnedModel::train(const std::vector<Measurement>& rows, const LearnedModel& prior,
                                 const TrainOptions& o, std::string kind) {
#ifndef TESSERA_HAVE_XGBOOST
  (void)rows, (void)prior, (void)o, (void)kind;
  unavailable();
#else
  std::vector<std::vector<float>> x;
  std::vector<float> label;
  for (const auto& m : rows) {
    if (!(m.cold_us > 0)) continue;
    const Prediction p = predict(m.config, m.task, m.limits);
    x.push_back(features(m.config, m.task, m.limits, p));
    label.push_back(float(std::log2(m.cold_us / p.time_us)));
  }
  if (x.empty()) fail_bad_input("no measurement with a time to learn from");
  const std::vector<double> start = prior.residuals(x);
  const std::size_t ncol = x.front().size();
  std::vector<float> flat;
  for (const auto& r : x) flat.insert(flat.end(), r.begin(), r.end());
  detail::DMatrix train(flat, x.size(), ncol);
  train.set("label", label);
  train.set("base_margin", std::vector<float>(start.begin(), start.end()));

  auto layer = std::make_shared<Layer>();
  layer->device_kind = std::move(kind);
  layer->rows = int(x.size());
  layer->options = {{"trees", o.trees}, {"max_depth", o.max_depth}, {"learning_rate", o.learning_rate},
                    {"min_child_weight", o.min_child_weight}, {"l2", o.l2}};
  layer->booster = std::make_unique<detail::Booster>(train);
  auto& b = *layer->booster;
  b.set("objective", "reg:squarederror");
  b.set("base_score", "0");  // the margin is the prior's residual plus this layer's: nothing else
  b.set("tree_method", "exact");
  b.set("max_depth", std::to_string(o.max_depth));
  b.set("eta", fmt::format("{}", o.learning_rate));
  b.set("min_child_weight", fmt::format("{}", o.min_child_weight));
  b.set("lambda", fmt::format("{}", o.l2));
  b.set("nthread", std::to_string(kTrainThreads));
  b.set("seed", "0");
  b.set("verbosity", "0");
  for (int i = 0; i < o.trees; ++i) b.update(i, train);

  LearnedModel out = prior;
  out.layers_.push_back(std::move(layer));
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
