/// Shared helpers: the first device code of every kernel, both backends.
/// emit_common.cpp (common_device_code) pastes common.cuh, GELU's math
/// (gelu.inc), epilogue.cuh, the work schedule (schedule.inc) and reduce.cuh
/// after the configuration constants.
/// Lines that start with three slashes, as these, are not emitted.
// ---- shared helpers -------------------------------------------------------
__device__ __forceinline__ unsigned smem_u32(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

