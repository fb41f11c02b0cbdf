// tessera's stand-in for the few PyTorch C++ types that torch-extension-style
// kernel files use (docs/abi.md, "Torch-extension files"). Written for
// tessera, not taken from PyTorch: no torch library exists at run time. The
// adapter (harness/torch_ext.cpp) pastes this text in front of the user's
// file, with the file's torch/ATen/c10/pybind11 includes taken out, and ends
// it with a tessera_launch() that builds the tensors from TesseraGemmParams.
//
// What it provides: Tensor (data_ptr, size, stride, sizes, numel, dim, dtype,
// options, device, is_cuda, is_contiguous), at::Half / c10::Half, the kHalf
// family of dtype constants, at::cuda::getCurrentCUDAStream() (the stream the
// harness passed to tessera_launch), getCurrentDeviceProperties(), no-op
// device guards, TORCH_CHECK and the CUDA check macros, and a PYBIND11_MODULE
// that compiles the binding block and drops it. Anything else fails to
// compile, which names what is missing. It is pasted into one source, never
// included, so it has no include guard.
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace tessera_shim {

enum class ScalarType { Half, Float, Int };

inline const char* scalar_type_name(ScalarType t) {
  switch (t) {
    case ScalarType::Half: return "Half";
    case ScalarType::Float: return "Float";
    case ScalarType::Int: return "Int";
  }
  return "?";
}
inline std::ostream& operator<<(std::ostream& os, ScalarType t) { return os << scalar_type_name(t); }

// Raised by a shim call the adapted kernel cannot be given (an operand the
// task's layout does not provide, a wrong dtype); tessera_launch turns it
// into a non-zero return.
struct ShimError : std::runtime_error {
  int code;
  ShimError(int c, const std::string& what) : std::runtime_error(what), code(c) {}
};

// tessera_launch's return codes (docs/abi.md).
inline constexpr int kEntryThrew = 1;        // the entry threw (TORCH_CHECK, runtime_error)
inline constexpr int kCudaErrorAfter = 2;    // a CUDA error was pending after the entry returned
inline constexpr int kMissingOperand = 3;    // the entry read an operand this task's layout does not provide
inline constexpr int kStreamJoinFailed = 4;  // ordering the per-thread stream with the harness's failed

struct Device {
  bool is_cuda() const { return true; }
  int index() const { return 0; }
};
inline std::ostream& operator<<(std::ostream& os, const Device&) { return os << "cuda:0"; }

struct TensorOptions {
  ScalarType type;
  ScalarType dtype() const { return type; }
  Device device() const { return {}; }
};
inline std::ostream& operator<<(std::ostream& os, const TensorOptions& o) {
  return os << "TensorOptions(dtype=" << o.type << ", device=cuda:0)";
}

struct IntList {
  std::vector<int64_t> values;
  int64_t operator[](std::size_t i) const { return values.at(i); }
  std::size_t size() const { return values.size(); }
  auto begin() const { return values.begin(); }
  auto end() const { return values.end(); }
  std::vector<int64_t> vec() const { return values; }
};
inline std::ostream& operator<<(std::ostream& os, const IntList& l) {
  os << "[";
  for (std::size_t i = 0; i < l.size(); ++i) os << (i ? ", " : "") << l[i];
  return os << "]";
}

// A view of one harness buffer. `missing` names why the task cannot provide
// it (its sizes stay readable, so shape logic runs; its data cannot be used).
class Tensor {
public:
  Tensor() = default;
  Tensor(void* data, std::vector<int64_t> sizes, std::vector<int64_t> strides, ScalarType type, std::string name,
         std::string missing = {})
      : data_(data), sizes_(std::move(sizes)), strides_(std::move(strides)), type_(type), name_(std::move(name)),
        missing_(std::move(missing)) {}

  void* data_ptr() const {
    check_present();
    return data_;
  }
  template <class T>
  T* data_ptr() const {
    check_present();
    if (sizeof(T) != element_size())
      throw ShimError(kEntryThrew, "data_ptr<T>() with a " + std::to_string(sizeof(T)) + "-byte T on " + name_ +
                                       ", whose elements are " + scalar_type_name(type_));
    return static_cast<T*>(data_);
  }
  template <class T>
  const T* const_data_ptr() const {
    return data_ptr<T>();
  }
  int64_t dim() const { return int64_t(sizes_.size()); }
  int64_t size(int64_t d) const { return sizes_.at(std::size_t(wrap(d))); }
  int64_t stride(int64_t d) const { return strides_.at(std::size_t(wrap(d))); }
  IntList sizes() const { return {sizes_}; }
  IntList strides() const { return {strides_}; }
  int64_t numel() const {
    int64_t n = 1;
    for (int64_t s : sizes_) n *= s;
    return n;
  }
  int64_t element_size() const { return type_ == ScalarType::Half ? 2 : 4; }
  ScalarType scalar_type() const { return type_; }
  ScalarType dtype() const { return type_; }
  TensorOptions options() const { return {type_}; }
  Device device() const { return {}; }
  bool is_cuda() const { return true; }
  bool defined() const { return data_ != nullptr || !missing_.empty(); }
  bool is_contiguous() const {
    int64_t expect = 1;
    for (int64_t d = dim() - 1; d >= 0; --d) {
      if (sizes_[std::size_t(d)] != 1 && strides_[std::size_t(d)] != expect) return false;
      expect *= sizes_[std::size_t(d)];
    }
    return true;
  }
  // No copies exist without torch: a non-contiguous view cannot be made contiguous.
  Tensor contiguous() const {
    if (!is_contiguous())
      throw ShimError(kEntryThrew, name_ + ".contiguous(): " + name_ + " is a strided view and tessera makes no copies");
    return *this;
  }

private:
  void check_present() const {
    if (!missing_.empty()) throw ShimError(kMissingOperand, missing_);
  }
  int64_t wrap(int64_t d) const { return d < 0 ? d + dim() : d; }

  void* data_ = nullptr;
  std::vector<int64_t> sizes_, strides_;
  ScalarType type_ = ScalarType::Half;
  std::string name_;
  std::string missing_;
};

// The stream the harness passed to tessera_launch, for the entry's duration.
inline cudaStream_t& current_stream_slot() {
  thread_local cudaStream_t stream = cudaStreamPerThread;
  return stream;
}

struct CUDAStream {
  cudaStream_t s;
  cudaStream_t stream() const { return s; }
  operator cudaStream_t() const { return s; }
  int device_index() const { return 0; }
};

inline std::string concat() { return {}; }
template <class... Parts>
std::string concat(const Parts&... parts) {
  std::ostringstream os;
  (os << ... << parts);
  return os.str();
}

// For PYBIND11_MODULE: the binding block compiles against this and is never run.
struct Module {
  template <class... Args>
  Module& def(Args&&...) {
    return *this;
  }
};

}  // namespace tessera_shim

// The names live in c10 (and c10::cuda); at and torch see them through
// using-directives, so at::Half, at::cuda::getCurrentCUDAStream() and
// torch::kHalf all name the same thing.
namespace c10 {
struct alignas(2) Half {
  unsigned short x;
};
using ScalarType = tessera_shim::ScalarType;
using Device = tessera_shim::Device;
using IntArrayRef = tessera_shim::IntList;
using Tensor = tessera_shim::Tensor;
using TensorOptions = tessera_shim::TensorOptions;
inline constexpr ScalarType kHalf = ScalarType::Half;
inline constexpr ScalarType kFloat16 = ScalarType::Half;
inline constexpr ScalarType kFloat = ScalarType::Float;
inline constexpr ScalarType kFloat32 = ScalarType::Float;
inline constexpr tessera_shim::Device kCUDA{};
namespace cuda {
using CUDAStream = tessera_shim::CUDAStream;
inline CUDAStream getCurrentCUDAStream(int = -1) { return {tessera_shim::current_stream_slot()}; }
inline CUDAStream getDefaultCUDAStream(int = -1) { return {tessera_shim::current_stream_slot()}; }
struct CUDAGuard {
  template <class... Args>
  explicit CUDAGuard(Args&&...) {}
};
using OptionalCUDAGuard = CUDAGuard;
inline cudaDeviceProp* getCurrentDeviceProperties() {
  static cudaDeviceProp prop = [] {
    cudaDeviceProp p{};
    int device = 0;
    cudaGetDevice(&device);
    cudaGetDeviceProperties(&p, device);
    return p;
  }();
  return &prop;
}
}  // namespace cuda
}  // namespace c10

namespace at {
using namespace c10;
}  // namespace at

namespace torch {
using namespace c10;
}  // namespace torch

namespace pybind11 {
struct arg {
  explicit arg(const char*) {}
  template <class T>
  arg& operator=(T&&) {
    return *this;
  }
};
}  // namespace pybind11
namespace py = pybind11;

#define TORCH_CHECK(cond, ...)                                                                                    \
  do {                                                                                                            \
    if (!(cond))                                                                                                  \
      throw std::runtime_error(::tessera_shim::concat("TORCH_CHECK(" #cond ") failed. ", ##__VA_ARGS__)); \
  } while (0)
#define TORCH_INTERNAL_ASSERT(cond, ...) TORCH_CHECK(cond, ##__VA_ARGS__)
#define AT_ASSERT(cond, ...) TORCH_CHECK(cond, ##__VA_ARGS__)
#define C10_CUDA_CHECK(expr)                                                                     \
  do {                                                                                           \
    const cudaError_t tessera_shim_err_ = (expr);                                                \
    if (tessera_shim_err_ != cudaSuccess)                                                        \
      throw std::runtime_error(::tessera_shim::concat(#expr ": ", cudaGetErrorString(tessera_shim_err_))); \
  } while (0)
#define AT_CUDA_CHECK(expr) C10_CUDA_CHECK(expr)
#define C10_CUDA_KERNEL_LAUNCH_CHECK() C10_CUDA_CHECK(cudaGetLastError())
#ifndef TORCH_EXTENSION_NAME
#define TORCH_EXTENSION_NAME tessera_extension
#endif
#define TESSERA_SHIM_CONCAT_(a, b) a##b
#define TESSERA_SHIM_CONCAT(a, b) TESSERA_SHIM_CONCAT_(a, b)
#define PYBIND11_MODULE(name, var) \
  [[maybe_unused]] static void TESSERA_SHIM_CONCAT(tessera_shim_unused_module_, name)(::tessera_shim::Module & var)

namespace tessera_shim {

// The operands of one call, as tensors and sizes (docs/abi.md lists the names).
struct Operands {
  Tensor a, b, b_col_major, b_nk, c, bias;
  int64_t m = 0, n = 0, k = 0;
};

inline Operands operands_of(const TesseraGemmParams& p) {
  const int64_t M = p.M, N = p.N, K = p.K;
  const bool tn = p.layout == 0;
  auto* B = const_cast<__half*>(p.B);
  const std::string layout = tn ? "TN" : "NN";
  auto only = [&](bool present, const char* what, const char* wants) {
    return present ? std::string() : concat(what, " exists only in ", wants, " tasks; this task is ", layout);
  };
  Operands o;
  o.a = Tensor(const_cast<__half*>(p.A), {M, K}, {K, 1}, ScalarType::Half, "a");
  o.b = Tensor(B, {K, N}, {N, 1}, ScalarType::Half, "b", only(!tn, "b (K x N row-major)", "NN"));
  o.b_col_major = Tensor(B, {K, N}, {1, K}, ScalarType::Half, "b_col_major", only(tn, "b_col_major (K x N column-major)", "TN"));
  o.b_nk = Tensor(B, {N, K}, {K, 1}, ScalarType::Half, "b_nk", only(tn, "b_nk (N x K row-major)", "TN"));
  o.c = Tensor(p.C, {M, N}, {N, 1}, ScalarType::Half, "c");
  o.bias = Tensor(const_cast<__half*>(p.bias), {N}, {1}, ScalarType::Half, "bias",
                  p.bias ? std::string() : std::string("bias exists only in tasks with a bias epilogue"));
  o.m = M;
  o.n = N;
  o.k = K;
  return o;
}

// Orders the per-thread default stream (where `<<<grid, block>>>` launches go,
// under --default-stream per-thread) after and before `stream`, so that work
// on either is the harness's work, also while `stream` is being captured into
// a graph. Nothing to do when the harness passes the per-thread stream itself.
class StreamJoin {
public:
  explicit StreamJoin(cudaStream_t stream) : stream_(stream) {
    if (stream_ == cudaStreamPerThread) return;
    ok_ = cudaEventRecord(fork_event(), stream_) == cudaSuccess &&
          cudaStreamWaitEvent(cudaStreamPerThread, fork_event(), 0) == cudaSuccess;
  }
  bool ok() const { return ok_; }
  bool join() {
    if (stream_ == cudaStreamPerThread) return true;
    return cudaEventRecord(join_event(), cudaStreamPerThread) == cudaSuccess &&
           cudaStreamWaitEvent(stream_, join_event(), 0) == cudaSuccess;
  }

private:
  static cudaEvent_t make_event() {
    cudaEvent_t e = nullptr;
    cudaEventCreateWithFlags(&e, cudaEventDisableTiming);
    return e;
  }
  static cudaEvent_t fork_event() {
    static cudaEvent_t e = make_event();
    return e;
  }
  static cudaEvent_t join_event() {
    static cudaEvent_t e = make_event();
    return e;
  }
  cudaStream_t stream_;
  bool ok_ = true;
};

// Calls the entry with the current stream set to `stream`; the return code of tessera_launch.
template <class Entry>
int run_entry(const TesseraGemmParams* p, cudaStream_t stream, Entry&& entry) {
  current_stream_slot() = stream;
  StreamJoin join(stream);
  if (!join.ok()) return kStreamJoinFailed;
  int code = 0;
  try {
    entry(operands_of(*p));
  } catch (const ShimError& e) {
    std::fprintf(stderr, "tessera torch shim: %s\n", e.what());
    code = e.code;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tessera torch shim: the entry threw: %s\n", e.what());
    code = kEntryThrew;
  }
  if (!join.join() && code == 0) code = kStreamJoinFailed;
  if (code == 0 && cudaPeekAtLastError() != cudaSuccess) {
    std::fprintf(stderr, "tessera torch shim: CUDA error after the entry: %s\n", cudaGetErrorString(cudaGetLastError()));
    code = kCudaErrorAfter;
  }
  return code;
}

}  // namespace tessera_shim
