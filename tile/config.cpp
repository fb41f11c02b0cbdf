#include "tile/config.hpp"

#include <cstdio>
#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/error.hpp"

namespace tessera::tile {

namespace {
constexpr int kWarpThreads = 32;
constexpr int kWarpgroupThreads = 128;
}  // namespace

int Config::threads() const {
  if (backend == Backend::wgmma_tma) return kWarpgroupThreads * ((inline_producer ? 0 : 1) + warps_m * warps_n);
  return kWarpThreads * warps_m * warps_n;
}

std::string to_string(Backend b) { return b == Backend::mma_sync ? "mma_sync" : "wgmma_tma"; }
std::string to_string(LoadOrder o) { return o == LoadOrder::paired ? "paired" : "staggered"; }
std::string to_string(SmemLayout s) { return s == SmemLayout::pad ? "pad" : "swizzle"; }
std::string to_string(EpilogueStore s) {
  return s == EpilogueStore::direct ? "direct" : s == EpilogueStore::staged ? "staged" : "tma";
}

std::string to_string(SplitKMode m) { return m == SplitKMode::serial ? "serial" : "parallel"; }

namespace {
const char* store_code(EpilogueStore s) {
  return s == EpilogueStore::direct ? "ed" : s == EpilogueStore::staged ? "es" : "et";
}
}  // namespace

namespace {
constexpr const char* kSwapAbTag = "swapab_";  // before the epilogue in a swap-AB config's name

char schedule_code(const Config& c) {
  if (c.persistent) return c.stream_k ? 's' : c.pingpong ? 'o' : 'p';
  return c.inline_producer ? 'i' : 't';
}
}  // namespace

std::string name(const Config& c) {
  return fmt::format("{}{}x{}x{}_g{}x{}_s{}p{}_{}_d{}_{}_{}_r{}_k{}{}_{}_c{}x{}_{}{}",
                     c.backend == Backend::mma_sync ? 'm' : 'w', c.bm, c.bn, c.bk, c.warps_m, c.warps_n,
                     c.stages, c.prefetch, c.load_order == LoadOrder::paired ? "pa" : "st",
                     c.reg_double_buffer ? 1 : 0, c.smem_layout == SmemLayout::pad ? "pd" : "sw",
                     store_code(c.epilogue_store), c.raster, c.split_k,
                     c.split_k_mode == SplitKMode::serial ? 's' : 'a', schedule_code(c), c.cluster_m, c.cluster_n,
                     c.swap_ab ? kSwapAbTag : "", tessera::to_string(c.epilogue));
}

namespace {
// The name's fields, or nothing where `text` is not exactly a name that name() writes.
std::optional<Config> read_name(const std::string& text) {
  Config c;
  char backend = 0, persistent = 0, split_mode = 0;
  char load[3] = {}, smem[3] = {}, store[3] = {}, epi[32] = {};
  int dbuf = 0, consumed = 0;
  const int got = std::sscanf(text.c_str(), "%c%dx%dx%d_g%dx%d_s%dp%d_%2[a-z]_d%d_%2[a-z]_%2[a-z]_r%d_k%d%c_%c_c%dx%d_%31[a-z_]%n",
                              &backend, &c.bm, &c.bn, &c.bk, &c.warps_m, &c.warps_n, &c.stages, &c.prefetch, load,
                              &dbuf, smem, store, &c.raster, &c.split_k, &split_mode, &persistent, &c.cluster_m, &c.cluster_n,
                              epi, &consumed);
  if (got != 19 || consumed != int(text.size())) return std::nullopt;
  c.split_k_mode = split_mode == 'a' ? SplitKMode::parallel : SplitKMode::serial;
  c.backend = backend == 'w' ? Backend::wgmma_tma : Backend::mma_sync;
  c.load_order = std::string(load) == "st" ? LoadOrder::staggered : LoadOrder::paired;
  c.reg_double_buffer = dbuf != 0;
  c.smem_layout = std::string(smem) == "pd" ? SmemLayout::pad : SmemLayout::swizzle;
  const std::string st(store);
  c.epilogue_store = st == "es" ? EpilogueStore::staged : st == "et" ? EpilogueStore::tma : EpilogueStore::direct;
  if (std::string("tpsoi").find(persistent) == std::string::npos) return std::nullopt;
  c.persistent = persistent == 'p' || persistent == 's' || persistent == 'o';
  c.stream_k = persistent == 's';
  c.pingpong = persistent == 'o';
  c.inline_producer = persistent == 'i';
  std::string epilogue(epi);
  c.swap_ab = epilogue.rfind(kSwapAbTag, 0) == 0;
  if (c.swap_ab) epilogue.erase(0, std::string(kSwapAbTag).size());
  try {
    c.epilogue = parse_epilogue(epilogue);
  } catch (const Error&) {
    return std::nullopt;
  }
  if (name(c) != text) return std::nullopt;  // anything the fields above did not round-trip exactly
  return c;
}
}  // namespace

Config parse_name(const std::string& text) {
  if (auto c = read_name(text)) return *c;
  // A name ends with its epilogue; one copied from a table or a plan without
  // it is the likeliest mistake (scripts/tile_ab.sh passes names as written).
  const bool no_epilogue = read_name(text + "_none").has_value();
  fail_bad_input(fmt::format("'{}' is not a tile config name (e.g. {}){}", text, name(Config{}),
                             no_epilogue ? fmt::format(": it names no epilogue; end it with _none, _bias, _bias_relu or "
                                                       "_bias_gelu, as in {}_none", text)
                                         : ""));
}

nlohmann::json to_json(const Config& c) {
  return {{"backend", to_string(c.backend)},
          {"bm", c.bm},
          {"bn", c.bn},
          {"bk", c.bk},
          {"warps_m", c.warps_m},
          {"warps_n", c.warps_n},
          {"stages", c.stages},
          {"prefetch", c.prefetch},
          {"load_order", to_string(c.load_order)},
          {"reg_double_buffer", c.reg_double_buffer},
          {"smem_layout", to_string(c.smem_layout)},
          {"epilogue_store", to_string(c.epilogue_store)},
          {"raster", c.raster},
          {"split_k", c.split_k},
          {"split_k_mode", to_string(c.split_k_mode)},
          {"persistent", c.persistent},
          {"stream_k", c.stream_k},
          {"pingpong", c.pingpong},
          {"inline_producer", c.inline_producer},
          {"swap_ab", c.swap_ab},
          {"cluster_m", c.cluster_m},
          {"cluster_n", c.cluster_n},
          {"epilogue", tessera::to_string(c.epilogue)}};
}

namespace {

int get_int(const nlohmann::json& v, const std::string& key) {
  if (!v.is_number_integer()) fail_bad_input(fmt::format("tile config '{}' must be an integer, got {}", key, v.dump()));
  const auto x = v.get<long long>();
  if (x < 0 || x > 1 << 20) fail_bad_input(fmt::format("tile config '{}' = {} is out of range", key, x));
  return int(x);
}

bool get_bool(const nlohmann::json& v, const std::string& key) {
  if (!v.is_boolean()) fail_bad_input(fmt::format("tile config '{}' must be true or false, got {}", key, v.dump()));
  return v.get<bool>();
}

std::string get_str(const nlohmann::json& v, const std::string& key) {
  if (!v.is_string()) fail_bad_input(fmt::format("tile config '{}' must be a string, got {}", key, v.dump()));
  return v.get<std::string>();
}

template <typename E>
E get_enum(const nlohmann::json& v, const std::string& key, const char* a, E ea, const char* b, E eb) {
  const auto s = get_str(v, key);
  if (s == a) return ea;
  if (s == b) return eb;
  fail_bad_input(fmt::format("tile config '{}' = '{}' (expected '{}' or '{}')", key, s, a, b));
}

}  // namespace

Config from_json(const nlohmann::json& j, const Config& base) {
  if (!j.is_object()) fail_bad_input("a tile config must be a JSON object");
  Config c = base;
  for (const auto& [key, v] : j.items()) {
    if (key == "backend") c.backend = get_enum(v, key, "mma_sync", Backend::mma_sync, "wgmma_tma", Backend::wgmma_tma);
    else if (key == "bm") c.bm = get_int(v, key);
    else if (key == "bn") c.bn = get_int(v, key);
    else if (key == "bk") c.bk = get_int(v, key);
    else if (key == "warps_m") c.warps_m = get_int(v, key);
    else if (key == "warps_n") c.warps_n = get_int(v, key);
    else if (key == "stages") c.stages = get_int(v, key);
    else if (key == "prefetch") c.prefetch = get_int(v, key);
    else if (key == "load_order") c.load_order = get_enum(v, key, "paired", LoadOrder::paired, "staggered", LoadOrder::staggered);
    else if (key == "reg_double_buffer") c.reg_double_buffer = get_bool(v, key);
    else if (key == "smem_layout") c.smem_layout = get_enum(v, key, "pad", SmemLayout::pad, "swizzle", SmemLayout::swizzle);
    else if (key == "epilogue_store") {
      const auto s = get_str(v, key);
      if (s == "direct") c.epilogue_store = EpilogueStore::direct;
      else if (s == "staged") c.epilogue_store = EpilogueStore::staged;
      else if (s == "tma") c.epilogue_store = EpilogueStore::tma;
      else fail_bad_input(fmt::format("tile config 'epilogue_store' = '{}' (expected direct, staged or tma)", s));
    }
    else if (key == "raster") c.raster = get_int(v, key);
    else if (key == "split_k") c.split_k = get_int(v, key);
    else if (key == "split_k_mode") c.split_k_mode = get_enum(v, key, "serial", SplitKMode::serial, "parallel", SplitKMode::parallel);
    else if (key == "persistent") c.persistent = get_bool(v, key);
    else if (key == "inline_producer") c.inline_producer = get_bool(v, key);
    else if (key == "stream_k") c.stream_k = get_bool(v, key);
    else if (key == "pingpong") c.pingpong = get_bool(v, key);
    else if (key == "swap_ab") c.swap_ab = get_bool(v, key);
    else if (key == "cluster_m") c.cluster_m = get_int(v, key);
    else if (key == "cluster_n") c.cluster_n = get_int(v, key);
    else if (key == "epilogue") c.epilogue = parse_epilogue(get_str(v, key));
    else fail_bad_input(fmt::format("unknown tile config key '{}'", key));
  }
  // One schedule letter in the name holds both: keep names unique.
  if (c.persistent && c.inline_producer) fail_bad_input("tile config: persistent and inline_producer are exclusive");
  if (c.stream_k && !c.persistent) fail_bad_input("tile config: stream_k needs persistent (stream-K is a persistent schedule)");
  if (c.pingpong && (!c.persistent || c.stream_k))
    fail_bad_input("tile config: pingpong needs persistent and not stream_k (ping-pong is a persistent schedule)");
  return c;
}

Config parse_config(const std::string& text) {
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && text[first] == '{') {
    const auto j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded()) fail_bad_input("tile config is not valid JSON");
    return from_json(j);
  }
  return parse_name(text);
}

}  // namespace tessera::tile
