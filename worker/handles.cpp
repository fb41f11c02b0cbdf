#include "worker/handles.hpp"

#include "worker/check.hpp"

namespace tessera::worker {

DeviceBuffer::DeviceBuffer(std::size_t bytes) : bytes_(bytes) {
  if (bytes > 0) TESSERA_CUDA_CHECK(cudaMalloc(&ptr_, bytes));
}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& o) noexcept {
  if (this != &o) {
    if (ptr_) cudaFree(ptr_);
    ptr_ = std::exchange(o.ptr_, nullptr);
    bytes_ = std::exchange(o.bytes_, 0);
  }
  return *this;
}

DeviceBuffer::~DeviceBuffer() noexcept {
  if (ptr_) cudaFree(ptr_);
}

Stream::Stream() { TESSERA_CUDA_CHECK(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking)); }
Stream::~Stream() noexcept {
  if (s_) cudaStreamDestroy(s_);
}

Event::Event() { TESSERA_CUDA_CHECK(cudaEventCreate(&e_)); }
Event::~Event() noexcept {
  if (e_) cudaEventDestroy(e_);
}

}  // namespace tessera::worker
