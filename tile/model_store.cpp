// Where learned cost models are stored and found, and each file read once
// per process (the declarations are in learned_model.hpp).
#include <algorithm>
#include <cstdlib>
#include <map>
#include <mutex>
#include <set>
#include <tuple>

#include <spdlog/spdlog.h>

#include "core/fs.hpp"
#include "tile/learned_model.hpp"

namespace tessera::tile {

namespace {

std::vector<std::filesystem::path> model_dirs() {
  std::vector<std::filesystem::path> dirs = {cache_dir() / "cost_models"};
  if (const char* d = std::getenv("TESSERA_COST_MODEL_DIR"); d && *d) dirs.emplace_back(d);
#ifdef TESSERA_COST_MODEL_DIR_DEFAULT
  dirs.emplace_back(TESSERA_COST_MODEL_DIR_DEFAULT);
#endif
  return dirs;
}

// $TESSERA_COST_MODEL, else in the first folder that holds one of `kinds`,
// the first of them there; empty when none.
std::filesystem::path find_model(std::initializer_list<std::string> kinds) {
  if (const char* f = std::getenv("TESSERA_COST_MODEL"); f && *f) return f;
  std::error_code ec;
  for (const auto& d : model_dirs())
    for (const auto& k : kinds)
      if (std::filesystem::exists(d / (k + ".json"), ec)) return d / (k + ".json");
  return {};
}

}  // namespace

std::filesystem::path stored_model_path(const std::string& kind) { return find_model({kind}); }

std::filesystem::path device_model_path(const std::string& kind) { return find_model({kind, kEveryKind}); }

std::vector<std::filesystem::path> stored_models() {
  std::vector<std::filesystem::path> out;
  if (const char* f = std::getenv("TESSERA_COST_MODEL"); f && *f) out.emplace_back(f);
  std::set<std::filesystem::path> names;  // a name found first hides it in the folders after
  std::error_code ec;
  for (const auto& d : model_dirs()) {
    if (!std::filesystem::is_directory(d, ec)) continue;
    std::vector<std::filesystem::path> here;
    for (const auto& e : std::filesystem::directory_iterator(d, ec))
      if (e.path().extension() == ".json") here.push_back(e.path());
    std::sort(here.begin(), here.end());
    for (const auto& p : here)
      if (names.insert(p.filename()).second) out.push_back(p);
  }
  return out;
}

LearnedModel load_stored_model(const std::filesystem::path& file) {
  // A shipped model is megabytes of trees (half a second to read), and a
  // suite tunes shape after shape, each tune asking for its kind's model.
  // Copies share the trees, which are never changed after loading. Never
  // freed: at exit XGBoost's own state may go first (a double free, seen).
  static std::mutex mu;
  static auto& read =
      *new std::map<std::filesystem::path, std::tuple<std::filesystem::file_time_type, std::uintmax_t, LearnedModel>>;
  std::error_code ec;
  const auto written = std::filesystem::last_write_time(file, ec);
  const auto size = ec ? 0 : std::filesystem::file_size(file, ec);
  if (ec) return LearnedModel::load(file);  // which says what is wrong with it
  std::lock_guard g(mu);
  if (const auto it = read.find(file);
      it != read.end() && std::get<0>(it->second) == written && std::get<1>(it->second) == size)
    return std::get<2>(it->second);
  LearnedModel m = LearnedModel::load(file);
  read.insert_or_assign(file, std::tuple{written, size, m});
  return m;
}

LearnedModel model_for_device(const std::string& kind) {
  if (!LearnedModel::available()) return {};
  const auto try_load = [](const std::filesystem::path& p) -> LearnedModel {
    try {
      return load_stored_model(p);
    } catch (const std::exception& e) {
      spdlog::warn("cost model {} not used: {}", p.string(), e.what());
      return {};
    }
  };
  // Folder by folder, the kind's own model before the pooled one: a pooled
  // model a user trained (the cache, $TESSERA_COST_MODEL_DIR) comes before a
  // kind's model shipped with the project.
  if (const auto found = device_model_path(kind); !found.empty()) return try_load(found);
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
