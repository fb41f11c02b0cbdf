#include "worker/candidate_runtime.hpp"


#include <algorithm>

#include <fmt/format.h>

#include "core/fs.hpp"
#include "core/contract.hpp"
#include "worker/check.hpp"
#include "worker/driver.hpp"
#include "worker/module.hpp"
#include "worker/tu_replay.hpp"

namespace tessera::worker {

namespace {

class DeviceOnlyKernel final : public GemmCallable {
public:
  DeviceOnlyKernel(const std::filesystem::path& cubin, const nlohmann::json& contract, const Task& task)
      : module_(read_file(cubin)), c_(contract_from_json(contract)), task_(task) {
    CUresult r = driver().cuModuleGetFunction(&fn_, module_.get(), "tessera_hgemm");
    if (r != CUDA_SUCCESS) throw launch_fault("no tessera_hgemm in the module", r);
    if (auto why = check_contract_for_task(c_, task); !why.empty())
      throw CandidateFault{Status::rejected, why};
    r = driver().cuFuncSetAttribute(fn_, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, c_.dynamic_smem_bytes);
    if (r != CUDA_SUCCESS)
      throw launch_fault(fmt::format("cannot allow {} bytes of dynamic shared memory", c_.dynamic_smem_bytes), r);
    int dev = 0;
    TESSERA_CUDA_CHECK(cudaGetDevice(&dev));
    TESSERA_CUDA_CHECK(cudaDeviceGetAttribute(&num_sms_, cudaDevAttrMultiProcessorCount, dev));
  }

  void launch(const TesseraGemmParams& p, cudaStream_t stream) override {
    // With a cluster, the tile grid rounds up to whole clusters along each axis
    // (the kernel leaves the extra tiles, which lie outside C, unstored).
    const auto round_up = [](long long tiles, int by) { return static_cast<unsigned>((tiles + by - 1) / by * by); };
    const unsigned tiles_n = round_up((task_.n + c_.tile_n - 1) / c_.tile_n, c_.cluster_x);
    const unsigned tiles_m = round_up((task_.m + c_.tile_m - 1) / c_.tile_m, c_.cluster_y);
    const unsigned cluster = static_cast<unsigned>(c_.cluster_x * c_.cluster_y);
    const bool persistent = c_.persistent_ctas_per_sm > 0;
    CUlaunchConfig cfg{};
    cfg.blockDimX = static_cast<unsigned>(c_.block_threads);
    cfg.blockDimY = cfg.blockDimZ = 1;
    cfg.sharedMemBytes = static_cast<unsigned>(c_.dynamic_smem_bytes);
    cfg.hStream = stream;
    CUlaunchAttribute attr{};
    if (cluster > 1) {
      // A persistent grid is one-dimensional: its clusters are too.
      attr.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
      attr.value.clusterDim.x = persistent ? cluster : static_cast<unsigned>(c_.cluster_x);
      attr.value.clusterDim.y = persistent ? 1u : static_cast<unsigned>(c_.cluster_y);
      attr.value.clusterDim.z = 1;
      cfg.attrs = &attr;
      cfg.numAttrs = 1;
    }
    if (persistent) {
      const unsigned long long tiles = 1ull * tiles_n * tiles_m * c_.split_k;
      unsigned long long ctas = std::min<unsigned long long>(tiles, 1ull * num_sms_ * c_.persistent_ctas_per_sm);
      if (cluster > 1) ctas = std::max<unsigned long long>(cluster, std::min(ctas, resident_cluster_ctas(cfg)) / cluster * cluster);
      cfg.gridDimX = static_cast<unsigned>(ctas);
      cfg.gridDimY = cfg.gridDimZ = 1;
    } else {
      cfg.gridDimX = tiles_n;
      cfg.gridDimY = tiles_m;
      cfg.gridDimZ = static_cast<unsigned>(c_.split_k);
    }
    void* args[] = {const_cast<TesseraGemmParams*>(&p)};
    CUresult r = driver().cuLaunchKernelEx(&cfg, fn_, args, nullptr);
    if (r != CUDA_SUCCESS) throw launch_fault("kernel launch refused", r);
  }

  unsigned long long workspace_bytes(const Task&) const override { return c_.workspace_bytes; }

  Resources resources() const override {
    Resources res = function_resources(fn_);
    res.dynamic_smem_bytes = c_.dynamic_smem_bytes;
    return res;
  }

  void prepare_params(TesseraGemmParams& p) const override {
    const bool tn = task_.layout == Layout::TN;
    encode(&p.tma_a, const_cast<__half*>(p.A), task_.m, task_.k, c_.tma_a_box_rows, c_.tma_a_box_cols, "A");
    encode(&p.tma_b, const_cast<__half*>(p.B), tn ? task_.n : task_.k, tn ? task_.k : task_.n, c_.tma_b_box_rows,
           c_.tma_b_box_cols, "B");
    encode(&p.tma_c, p.C, task_.m, task_.n, c_.tma_c_box_rows, c_.tma_c_box_cols, "C");
  }

private:
  // CTAs of the clusters that can be resident at once: a cluster lives in one
  // GPC, so pairs fit fewer than SMs / 2 times when a GPC has an odd count. A
  // persistent grid larger than that would run its last clusters as a second
  // wave. Asked once (the answer depends only on the function and the cluster).
  unsigned long long resident_cluster_ctas(CUlaunchConfig cfg) {
    if (resident_cluster_ctas_ == 0) {
      cfg.gridDimX = cfg.attrs[0].value.clusterDim.x;  // any grid of whole clusters
      cfg.gridDimY = cfg.gridDimZ = 1;
      int clusters = 0;
      const CUresult r = driver().cuOccupancyMaxActiveClusters(&clusters, fn_, &cfg);
      if (r != CUDA_SUCCESS || clusters < 1)
        throw CandidateFault{Status::launch_error,
                             fmt::format("no cluster of {} CTAs with {} bytes of shared memory fits ({})",
                                         cfg.attrs[0].value.clusterDim.x, c_.dynamic_smem_bytes,
                                         driver_error_name(r))};
      resident_cluster_ctas_ = 1ull * clusters * cfg.attrs[0].value.clusterDim.x;
    }
    return resident_cluster_ctas_;
  }

  // A row-major rows×cols fp16 tensor, box of box_rows×box_cols elements.
  void encode(TesseraTensorMap* out, void* base, std::int64_t rows, std::int64_t cols, int box_rows, int box_cols,
              const char* name) const {
    if (box_rows <= 0 || box_cols <= 0) return;
    if ((cols * 2) % 16 != 0)
      throw CandidateFault{Status::launch_error,
                           fmt::format("tensor map for {} needs a row pitch that is a multiple of 16 bytes, got {} "
                                       "fp16 columns", name, cols)};
    static_assert(sizeof(TesseraTensorMap) == sizeof(CUtensorMap));
    cuuint64_t dims[2] = {static_cast<cuuint64_t>(cols), static_cast<cuuint64_t>(rows)};
    cuuint64_t strides[1] = {static_cast<cuuint64_t>(cols * 2)};
    cuuint32_t box[2] = {static_cast<cuuint32_t>(box_cols), static_cast<cuuint32_t>(box_rows)};
    cuuint32_t elem[2] = {1, 1};
    CUtensorMapSwizzle sw = c_.tma_swizzle_bytes == 128  ? CU_TENSOR_MAP_SWIZZLE_128B
                            : c_.tma_swizzle_bytes == 64 ? CU_TENSOR_MAP_SWIZZLE_64B
                            : c_.tma_swizzle_bytes == 32 ? CU_TENSOR_MAP_SWIZZLE_32B
                                                         : CU_TENSOR_MAP_SWIZZLE_NONE;
    // 256-byte L2 promotion: a 128-byte box row (one swizzle row) also brings
    // the next k-tile's 128 bytes of that row into L2, so DRAM serves each row
    // in 256-byte pieces. On the H200 it took 0.3-2.8% off the memory-bound
    // decode winners and nothing off the compute-bound ones (docs/tile.md).
    CUresult r = driver().cuTensorMapEncodeTiled(reinterpret_cast<CUtensorMap*>(out), CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2,
                                                 base, dims, strides, box, elem, CU_TENSOR_MAP_INTERLEAVE_NONE, sw,
                                                 CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                                                 CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS)
      throw launch_fault(fmt::format("cannot encode the tensor map for {} (box {}x{}, swizzle {})", name, box_rows,
                                     box_cols, c_.tma_swizzle_bytes), r);
  }

  Module module_;
  CUfunction fn_ = nullptr;
  LaunchContract c_;
  Task task_;
  int num_sms_ = 0;
  unsigned long long resident_cluster_ctas_ = 0;
};

}  // namespace

std::unique_ptr<GemmCallable> load_gemm_callable(CandidateKind kind, const std::filesystem::path& artifact,
                                                 const nlohmann::json& contract, const Task& task) {
  if (kind == CandidateKind::device_only) return std::make_unique<DeviceOnlyKernel>(artifact, contract, task);
  return load_translation_unit(artifact, task);
}

bool is_sticky(cudaError_t e) {
  switch (e) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorAssert:
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorLaunchTimeout:
    case cudaErrorECCUncorrectable:
    case cudaErrorUnknown: return true;
    default: return false;
  }
}

bool is_machine_failure(cudaError_t e) {
  switch (e) {
    case cudaErrorECCUncorrectable:   // the GPU's memory failed
    case cudaErrorDevicesUnavailable: // another process holds the GPU (exclusive mode)
    case cudaErrorSystemNotReady:
    case cudaErrorSystemDriverMismatch:
    case cudaErrorNoDevice:
    case cudaErrorInsufficientDriver: return true;
    default: return false;
  }
}

CandidateFault classify_cuda_error(cudaError_t e, const std::string& where) {
  const std::string what = fmt::format("{}: {} ({})", where, cudaGetErrorName(e), cudaGetErrorString(e));
  if (is_machine_failure(e)) return {Status::infra_error, what + ": a failure of the machine, not of the candidate"};
  const Status s = is_sticky(e) ? Status::runtime_fault : Status::launch_error;
  return {s, what};
}

}  // namespace tessera::worker
