#pragma once
// The task contract (docs/contracts.md): one HGEMM problem.
// A is M×K row-major, C is M×N row-major. Layout TN: B is N×K row-major
// (K×N column-major); NN: B is K×N row-major. This is CUDA-L2's convention.
#include <cstdint>
#include <string>

#include <nlohmann/json_fwd.hpp>

namespace tessera {

enum class Layout { TN, NN };
enum class Epilogue { none, bias, bias_relu, bias_gelu };

struct Task {
  std::string op = "hgemm";
  std::int64_t m = 0, n = 0, k = 0;
  Layout layout = Layout::TN;
  std::string acc = "f32";
  Epilogue epilogue = Epilogue::none;

  double flops() const { return 2.0 * double(m) * double(n) * double(k); }
  // Throughput when one call takes `us` microseconds (us > 0).
  double tflops_at(double us) const { return flops() / (us * 1e-6) / 1e12; }
  // Each input read once, the output written once (and the bias, if any).
  double min_bytes() const;
  // Stable identifier, e.g. "hgemm_4096x4096x4096_TN_none".
  std::string id() const;
  std::string shape() const;  // "4096x4096x4096"
};

// Largest dimension accepted; larger products overflow 32-bit indexing in
// candidates and need more memory than one H100 has for the verification set.
inline constexpr std::int64_t kMaxDim = 65536;

std::string to_string(Layout l);
std::string to_string(Epilogue e);
Layout parse_layout(const std::string& s);      // throws bad_input
Epilogue parse_epilogue(const std::string& s);  // throws bad_input

// Strict parsing: unknown keys, wrong types and bad values are bad_input errors
// with one clear line, never a crash.
Task parse_task(const nlohmann::json& j);
Task parse_task_string(const std::string& text);
// "MxNxK" (also "M,N,K"), or a task id as tessera prints it
// ("hgemm_4096x4096x4096_TN_none"; the op, layout and epilogue may be left
// off the end). An id's layout and epilogue must agree with `layout` and
// `epilogue` where those are not the defaults.
Task task_from_shape(const std::string& shape, const std::string& layout = "TN",
                     const std::string& epilogue = "none");
nlohmann::json to_json(const Task& t);
// The same as members of other JSON structs (core/json_struct.hpp); both
// readers are parse_task's, the strict one names `where` in its errors.
void to_json(nlohmann::json& j, const Task& t);
void from_json(const nlohmann::json& j, Task& t);
void from_json_strict(const nlohmann::json& j, Task& t, const std::string& where);
void validate(const Task& t);  // throws bad_input

}  // namespace tessera
