#pragma once
// Torch-extension-style kernel files as translation units, without torch at
// run time (docs/abi.md, "Torch-extension files"). Such a file defines a host
// function taking torch::Tensor arguments (and maybe sizes), reads pointers
// with data_ptr() and launches on the default stream or
// at::cuda::getCurrentCUDAStream(). The adapter keeps the file as it is, takes
// out its torch/ATen/c10/pybind11 includes, puts tessera's shim header
// (core/abi/tessera_torch_shim.cuh) in front and a tessera_launch() after
// it that calls the named function with the harness's buffers as tensors.
#include <string>
#include <utility>
#include <vector>

namespace tessera {

// "hgemm(a, b, c)": the function to call and, in order, what to pass it.
struct TorchEntry {
  std::string function;
  std::vector<std::string> args;
};

// The names an entry may pass and what each one is.
const std::vector<std::pair<std::string, std::string>>& torch_entry_arguments();

// bad_input with the accepted forms for a malformed spec or an unknown name.
TorchEntry parse_torch_entry(const std::string& spec);

// True when the source includes a torch, ATen or c10 header.
bool includes_torch_headers(const std::string& source);

// The adapted source: nvcc directive for --default-stream per-thread, the ABI
// header, the shim, the file (its torch-family includes commented out, line
// numbers kept through #line), and tessera_launch.
std::string adapt_torch_extension(const std::string& source, const std::string& file_name, const TorchEntry& entry);

}  // namespace tessera
