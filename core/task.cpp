#include "core/task.hpp"

#include <cctype>
#include <charconv>
#include <set>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/error.hpp"

namespace tessera {

double Task::min_bytes() const {
  const double h = 2.0;  // bytes per fp16
  double bytes = h * (double(m) * double(k) + double(k) * double(n) + double(m) * double(n));
  if (epilogue != Epilogue::none) bytes += h * double(n);
  return bytes;
}

std::string Task::shape() const { return fmt::format("{}x{}x{}", m, n, k); }

std::string Task::id() const {
  return fmt::format("{}_{}_{}_{}", op, shape(), to_string(layout), to_string(epilogue));
}

std::string to_string(Layout l) { return l == Layout::TN ? "TN" : "NN"; }

std::string to_string(Epilogue e) {
  switch (e) {
    case Epilogue::none: return "none";
    case Epilogue::bias: return "bias";
    case Epilogue::bias_relu: return "bias_relu";
    case Epilogue::bias_gelu: return "bias_gelu";
  }
  return "none";
}

Layout parse_layout(const std::string& s) {
  if (s == "TN" || s == "tn") return Layout::TN;
  if (s == "NN" || s == "nn") return Layout::NN;
  fail_bad_input(fmt::format("unsupported layout '{}' (supported: TN, NN)", s));
}

Epilogue parse_epilogue(const std::string& s) {
  if (s == "none" || s.empty()) return Epilogue::none;
  if (s == "bias") return Epilogue::bias;
  if (s == "bias_relu" || s == "bias+relu") return Epilogue::bias_relu;
  if (s == "bias_gelu" || s == "bias+gelu") return Epilogue::bias_gelu;
  fail_bad_input(fmt::format("unsupported epilogue '{}' (supported: none, bias, bias_relu, bias_gelu)", s));
}

void validate(const Task& t) {
  if (t.op != "hgemm") fail_bad_input(fmt::format("unsupported op '{}' (supported: hgemm)", t.op));
  if (t.acc != "f32") fail_bad_input(fmt::format("unsupported accumulator '{}' (supported: f32)", t.acc));
  for (auto [name, v] : {std::pair{"m", t.m}, {"n", t.n}, {"k", t.k}}) {
    if (v < 1 || v > kMaxDim)
      fail_bad_input(fmt::format("task dimension {}={} is out of range [1, {}]", name, v, kMaxDim));
  }
}

namespace {

std::int64_t get_dim(const nlohmann::json& j, const char* key) {
  if (!j.contains(key)) fail_bad_input(fmt::format("task is missing '{}'", key));
  const auto& v = j.at(key);
  if (!v.is_number_integer()) fail_bad_input(fmt::format("task field '{}' must be an integer, got {}", key, v.dump()));
  return v.get<std::int64_t>();
}

std::string get_str(const nlohmann::json& j, const char* key, const char* fallback) {
  if (!j.contains(key)) return fallback;
  const auto& v = j.at(key);
  if (!v.is_string()) fail_bad_input(fmt::format("task field '{}' must be a string, got {}", key, v.dump()));
  return v.get<std::string>();
}

}  // namespace

Task parse_task(const nlohmann::json& j) {
  if (!j.is_object()) fail_bad_input("task must be a JSON object, e.g. {\"op\":\"hgemm\",\"m\":4096,\"n\":4096,\"k\":4096}");
  static const std::set<std::string> known = {"op", "m", "n", "k", "layout", "acc", "epilogue"};
  for (const auto& [key, _] : j.items()) {
    if (!known.contains(key)) fail_bad_input(fmt::format("unknown task field '{}'", key));
  }
  Task t;
  t.op = get_str(j, "op", "hgemm");
  t.m = get_dim(j, "m");
  t.n = get_dim(j, "n");
  t.k = get_dim(j, "k");
  t.layout = parse_layout(get_str(j, "layout", "TN"));
  t.acc = get_str(j, "acc", "f32");
  t.epilogue = parse_epilogue(get_str(j, "epilogue", "none"));
  validate(t);
  return t;
}

Task parse_task_string(const std::string& text) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    fail_bad_input(fmt::format("task is not valid JSON: {}", e.what()));
  }
  return parse_task(j);
}

namespace {

constexpr const char* kShapeHelp =
    "expected MxNxK (e.g. 4096x4096x4096) or a task id (e.g. hgemm_4096x4096x4096_TN_none)";

Task task_of_dims(const std::string& shape, const std::string& text) {
  std::int64_t dims[3] = {0, 0, 0};
  const char* p = shape.data();
  const char* end = shape.data() + shape.size();
  for (int i = 0; i < 3; ++i) {
    auto [next, ec] = std::from_chars(p, end, dims[i]);
    if (ec != std::errc() || (i < 2 && (next == end || (*next != 'x' && *next != 'X' && *next != ','))) ||
        (i == 2 && next != end))
      fail_bad_input(fmt::format("bad shape '{}': {}", text, kShapeHelp));
    p = next + 1;
  }
  Task t;
  t.m = dims[0];
  t.n = dims[1];
  t.k = dims[2];
  return t;
}

std::vector<std::string> split_underscores(const std::string& s) {
  std::vector<std::string> parts;
  std::size_t from = 0;
  for (auto at = s.find('_'); at != std::string::npos; at = s.find('_', from)) {
    parts.push_back(s.substr(from, at - from));
    from = at + 1;
  }
  parts.push_back(s.substr(from));
  return parts;
}

// Task::id()'s form, op_MxNxK_LAYOUT_EPILOGUE (the epilogue may hold '_'),
// also without the op, the epilogue or the layout.
Task task_of_id(const std::string& text) {
  auto parts = split_underscores(text);
  std::string op = "hgemm";
  if (!parts.empty() && !parts.front().empty() && !std::isdigit(static_cast<unsigned char>(parts.front()[0]))) {
    op = parts.front();
    parts.erase(parts.begin());
  }
  if (parts.empty()) fail_bad_input(fmt::format("bad shape '{}': {}", text, kShapeHelp));
  Task t = task_of_dims(parts[0], text);
  t.op = op;
  if (parts.size() > 1) t.layout = parse_layout(parts[1]);
  if (parts.size() > 2) {
    std::string epilogue = parts[2];
    for (std::size_t i = 3; i < parts.size(); ++i) epilogue += "_" + parts[i];
    t.epilogue = parse_epilogue(epilogue);
  }
  return t;
}

}  // namespace

Task task_from_shape(const std::string& shape, const std::string& layout, const std::string& epilogue) {
  if (shape.find('_') == std::string::npos) {
    Task t = task_of_dims(shape, shape);
    t.layout = parse_layout(layout);
    t.epilogue = parse_epilogue(epilogue);
    validate(t);
    return t;
  }
  Task t = task_of_id(shape);
  // Explicit settings that disagree with the id's are an error, not a silent choice.
  if (layout != "TN" && parse_layout(layout) != t.layout)
    fail_bad_input(fmt::format("task '{}' has layout {}, not {}", shape, to_string(t.layout), layout));
  if (epilogue != "none" && parse_epilogue(epilogue) != t.epilogue)
    fail_bad_input(fmt::format("task '{}' has epilogue {}, not {}", shape, to_string(t.epilogue), epilogue));
  validate(t);
  return t;
}

nlohmann::json to_json(const Task& t) {
  return {{"op", t.op},   {"m", t.m},     {"n", t.n}, {"k", t.k}, {"layout", to_string(t.layout)},
          {"acc", t.acc}, {"epilogue", to_string(t.epilogue)}};
}

void to_json(nlohmann::json& j, const Task& t) { j = to_json(t); }

void from_json(const nlohmann::json& j, Task& t) { t = parse_task(j); }

void from_json_strict(const nlohmann::json& j, Task& t, const std::string& where) {
  try {
    t = parse_task(j);
  } catch (const Error& e) {
    fail_bad_input(fmt::format("{}: {}", where, e.what()));
  }
}

}  // namespace tessera
