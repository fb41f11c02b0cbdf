// Adversarial corpus -- a vendor library found through the dynamic linker's r_debug list, translation unit.
// Tries: the dl_iterate_phdr route without dl_iterate_phdr: the loader's own
// list of loaded objects (`_r_debug.r_map`, a data symbol of ld.so that no
// policy names) leads to libcublas (the process hosting its host code links
// it), and cublasGemmEx is looked up in that object's GNU hash table by hand.
// Handle and workspace are made in a constructor, at load time, outside any
// stream capture, so the captured call is a plain cuBLAS GEMM on the stream.
// Caught at run time: the worker replays only kernels of the unit's own
// device code (.nv_fatbin); the captured cuBLAS kernels are not there
// -> rejected ("device code"). (A launch_error is acceptable where cuBLAS
// cannot be captured in the runner.) A symbol policy cannot see this route.
#include <cuda_runtime.h>
#include <elf.h>
#include <link.h>

#include <cstring>

#include "tessera_abi.cuh"

namespace {
using GemmEx = int (*)(void*, int, int, int, int, int, const void*, const void*, int, int, const void*, int, int,
                       const void*, void*, int, int, int, int);
using Create = int (*)(void**);
using SetStream = int (*)(void*, cudaStream_t);
using SetWorkspace = int (*)(void*, void*, size_t);
constexpr int kOpN = 0, kOpT = 1, kR16F = 2, kCompute32F = 68, kGemmDefault = -1;

// `name` in a loaded object's dynamic symbol table, through its GNU hash table.
void* lookup(ElfW(Addr) base, const ElfW(Dyn)* dyn, const char* name) {
  const ElfW(Sym)* syms = nullptr;
  const char* strs = nullptr;
  const uint32_t* gnu = nullptr;
  auto at = [&](ElfW(Addr) p) { return p < base ? p + base : p; };  // glibc relocates these; some loaders do not
  for (; dyn->d_tag != DT_NULL; ++dyn) {
    if (dyn->d_tag == DT_SYMTAB) syms = reinterpret_cast<const ElfW(Sym)*>(at(dyn->d_un.d_ptr));
    if (dyn->d_tag == DT_STRTAB) strs = reinterpret_cast<const char*>(at(dyn->d_un.d_ptr));
    if (dyn->d_tag == DT_GNU_HASH) gnu = reinterpret_cast<const uint32_t*>(at(dyn->d_un.d_ptr));
  }
  if (!syms || !strs || !gnu) return nullptr;
  const uint32_t buckets = gnu[0], first = gnu[1], bloom_words = gnu[2];
  const uint32_t* bucket = reinterpret_cast<const uint32_t*>(reinterpret_cast<const ElfW(Addr)*>(gnu + 4) + bloom_words);
  const uint32_t* chain = bucket + buckets;
  uint32_t h = 5381;
  for (const char* c = name; *c; ++c) h = h * 33 + static_cast<unsigned char>(*c);
  for (uint32_t i = bucket[h % buckets]; i >= first && i != 0; ++i) {
    const uint32_t link = chain[i - first];
    if ((link | 1) == (h | 1) && syms[i].st_shndx != SHN_UNDEF && std::strcmp(strs + syms[i].st_name, name) == 0)
      return reinterpret_cast<void*>(base + syms[i].st_value);
    if (link & 1) break;
  }
  return nullptr;
}

struct Vendor {
  GemmEx gemm = nullptr;
  Create create = nullptr;
  SetStream set_stream = nullptr;
  SetWorkspace set_workspace = nullptr;
  void* handle = nullptr;
} vendor;

constexpr size_t kWorkspaceBytes = 32u << 20;

__attribute__((constructor)) void find_vendor() {
  for (const link_map* m = _r_debug.r_map; m && !vendor.gemm; m = m->l_next) {
    if (!m->l_name || !std::strstr(m->l_name, "libcublas.so")) continue;
    vendor.gemm = reinterpret_cast<GemmEx>(lookup(m->l_addr, m->l_ld, "cublasGemmEx"));
    vendor.create = reinterpret_cast<Create>(lookup(m->l_addr, m->l_ld, "cublasCreate_v2"));
    vendor.set_stream = reinterpret_cast<SetStream>(lookup(m->l_addr, m->l_ld, "cublasSetStream_v2"));
    vendor.set_workspace = reinterpret_cast<SetWorkspace>(lookup(m->l_addr, m->l_ld, "cublasSetWorkspace_v2"));
  }
  void* workspace = nullptr;
  if (!vendor.create || vendor.create(&vendor.handle) != 0) vendor.handle = nullptr;
  else if (vendor.set_workspace && cudaMalloc(&workspace, kWorkspaceBytes) == cudaSuccess)
    vendor.set_workspace(vendor.handle, workspace, kWorkspaceBytes);  // no allocation while captured
}

__global__ void gemm(const __half* A, const __half* B, __half* C, int M, int N, int K) {
  const int row = blockIdx.y * 16 + threadIdx.x / 16, col = blockIdx.x * 16 + threadIdx.x % 16;
  if (row >= M || col >= N) return;
  float acc = 0.f;
  for (int k = 0; k < K; ++k) acc += __half2float(A[(size_t)row * K + k]) * __half2float(B[(size_t)col * K + k]);
  C[(size_t)row * N + col] = __float2half_rn(acc);
}
}  // namespace

extern "C" int tessera_launch(const TesseraGemmParams* p, cudaStream_t stream) {
  if (vendor.handle && vendor.gemm && vendor.set_stream) {
    vendor.set_stream(vendor.handle, stream);
    const float one = 1.f, zero = 0.f;
    return vendor.gemm(vendor.handle, kOpT, kOpN, p->N, p->M, p->K, &one, p->B, kR16F, p->K, p->A, kR16F, p->K,
                       &zero, p->C, kR16F, p->N, kCompute32F, kGemmDefault);
  }
  gemm<<<dim3((p->N + 15) / 16, (p->M + 15) / 16), 256, 0, stream>>>(p->A, p->B, p->C, p->M, p->N, p->K);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
