#include "harness/torch_ext.hpp"

#include <algorithm>
#include <regex>
#include <sstream>

#include <fmt/format.h>

#include "core/error.hpp"
#include "harness/detail/build_directives.hpp"

namespace tessera {

namespace detail {
const std::string& embedded_torch_shim();
}

namespace {

// Header families the shim stands in for; an include of any of them is taken out.
const std::regex& torch_include() {
  static const std::regex re(R"(^\s*#\s*include\s*[<"](torch|ATen|c10|pybind11|caffe2)/[^>"]*[>"].*$)");
  return re;
}

// Launches must land in the stream the harness passes, also for `<<<g, b>>>`.
constexpr const char* kPerThreadStream = "--default-stream=per-thread";

std::string join(const std::vector<std::string>& v, const std::string& sep) {
  std::string out;
  for (std::size_t i = 0; i < v.size(); ++i) out += (i ? sep : "") + v[i];
  return out;
}

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return {};
  return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

}  // namespace

const std::vector<std::pair<std::string, std::string>>& torch_entry_arguments() {
  static const std::vector<std::pair<std::string, std::string>> args = {
      {"a", "A: M x K row-major tensor"},
      {"b", "B as a K x N row-major tensor (NN tasks)"},
      {"b_col_major", "B as a K x N column-major tensor, strides (1, K) (TN tasks)"},
      {"b_nk", "B as an N x K row-major tensor (TN tasks)"},
      {"c", "C: M x N row-major output tensor"},
      {"bias", "the bias, length N (bias epilogues)"},
      {"m", "M as an integer"},
      {"n", "N as an integer"},
      {"k", "K as an integer"},
  };
  return args;
}

TorchEntry parse_torch_entry(const std::string& spec) {
  static const std::regex form(R"(^\s*([A-Za-z_][A-Za-z0-9_:]*)\s*\(([^()]*)\)\s*$)");
  std::smatch m;
  if (!std::regex_match(spec, m, form))
    fail_bad_input(fmt::format("--torch-entry '{}': expected FUNCTION(ARG, ...), e.g. \"hgemm(a, b_col_major, c)\"", spec));
  TorchEntry e{m[1].str(), {}};
  std::vector<std::string> names;
  for (const auto& [name, what] : torch_entry_arguments()) names.push_back(name);
  std::istringstream list(m[2].str());
  for (std::string part; std::getline(list, part, ',');) {
    const std::string arg = trim(part);
    if (arg.empty()) fail_bad_input(fmt::format("--torch-entry '{}': an argument is empty", spec));
    if (std::find(names.begin(), names.end(), arg) == names.end())
      fail_bad_input(fmt::format("--torch-entry '{}': unknown argument '{}' (known: {})", spec, arg, join(names, ", ")));
    e.args.push_back(arg);
  }
  if (e.args.empty()) fail_bad_input(fmt::format("--torch-entry '{}': the entry takes no operands", spec));
  return e;
}

bool includes_torch_headers(const std::string& source) {
  std::istringstream in(source);
  for (std::string line; std::getline(in, line);)
    if (std::regex_match(line, torch_include())) return true;
  return false;
}

std::string adapt_torch_extension(const std::string& source, const std::string& file_name, const TorchEntry& entry) {
  const std::string quoted = fmt::format("\"{}\"", file_name);
  std::string out = detail::nvcc_directive_lines({kPerThreadStream});
  out += fmt::format(
      "// Adapted by tessera from the torch-extension file {} (docs/abi.md): the shim below stands in\n"
      "// for torch; tessera_launch at the end calls {}.\n"
      "#include <cuda_runtime.h>\n#include \"tessera_abi.cuh\"\n",
      file_name, entry.function);
  out += detail::embedded_torch_shim();
  out += fmt::format("\n#line 1 {}\n", quoted);
  std::istringstream in(source);
  for (std::string line; std::getline(in, line);) {
    if (std::regex_match(line, torch_include())) out += "// (tessera shim in place of) " + line.substr(line.find('#') + 1) + "\n";
    else out += line + "\n";
  }
  std::vector<std::string> call;
  for (const auto& a : entry.args) call.push_back("o_." + a);
  out += fmt::format(
      "\n// tessera: the entry point the harness calls (generated)\n"
      "extern \"C\" int tessera_launch(const TesseraGemmParams* p, cudaStream_t stream) {{\n"
      "  return ::tessera_shim::run_entry(p, stream, [](::tessera_shim::Operands o_) {{ {}({}); }});\n"
      "}}\n",
      entry.function, join(call, ", "));
  return out;
}

}  // namespace tessera
