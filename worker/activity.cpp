#include "worker/detail/activity.hpp"

#include <cupti.h>

#include <cstdlib>
#include <cstring>
#include <mutex>

#include "worker/check.hpp"
#include "worker/integrity_kernels.hpp"
#include "worker/probes.hpp"

namespace tessera::worker::detail {

namespace {

constexpr std::size_t kBufferBytes = 8u << 20;
constexpr std::size_t kBufferAlign = 8;

std::mutex g_mutex;
std::vector<ActivityRecord> g_records;

ActivityRecord::Who classify(const char* name) {
  if (!name) return ActivityRecord::Who::other;
  if (std::strcmp(name, kFlushKernelName) == 0) return ActivityRecord::Who::flush;
  if (std::strcmp(name, kProbeKernelName) == 0) return ActivityRecord::Who::probe;
  // Poison, input variation and output checks around a candidate's calls.
  if (std::strncmp(name, kHarnessKernelPrefix, std::strlen(kHarnessKernelPrefix)) == 0)
    return ActivityRecord::Who::harness;
  return ActivityRecord::Who::other;
}

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(kBufferAlign, kBufferBytes));
  *size = *buffer ? kBufferBytes : 0;
  *max_records = 0;
}

void CUPTIAPI buffer_completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
  std::vector<ActivityRecord> local;
  CUpti_Activity* rec = nullptr;
  while (cuptiActivityGetNextRecord(buffer, valid, &rec) == CUPTI_SUCCESS) {
    ActivityRecord r;
    switch (rec->kind) {
      case CUPTI_ACTIVITY_KIND_KERNEL:
      case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
        auto* k = reinterpret_cast<CUpti_ActivityKernel10*>(rec);
        r = {k->start, k->end, classify(k->name)};
        break;
      }
      case CUPTI_ACTIVITY_KIND_MEMCPY: {
        auto* m = reinterpret_cast<CUpti_ActivityMemcpy6*>(rec);
        r = {m->start, m->end, ActivityRecord::Who::other};
        break;
      }
      case CUPTI_ACTIVITY_KIND_MEMSET: {
        auto* m = reinterpret_cast<CUpti_ActivityMemset4*>(rec);
        r = {m->start, m->end, ActivityRecord::Who::other};
        break;
      }
      default: continue;
    }
    local.push_back(r);
  }
  std::free(buffer);
  std::lock_guard lock(g_mutex);
  g_records.insert(g_records.end(), local.begin(), local.end());
}

}  // namespace

ActivityTrace& ActivityTrace::instance() {
  static ActivityTrace t;
  return t;
}

ActivityTrace::ActivityTrace() {
  if (const char* off = std::getenv("TESSERA_NO_CUPTI"); off && *off == '1') {
    reason_ = "disabled by TESSERA_NO_CUPTI=1";
    return;
  }
  try {
    TESSERA_CUPTI_CHECK(cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed));
    TESSERA_CUPTI_CHECK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
    TESSERA_CUPTI_CHECK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMCPY));
    TESSERA_CUPTI_CHECK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMSET));
    available_ = true;
  } catch (const Error& e) {
    reason_ = e.what();
  }
}

std::vector<ActivityRecord> ActivityTrace::drain() {
  if (!available_) return {};
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  std::lock_guard lock(g_mutex);
  return std::exchange(g_records, {});
}

}  // namespace tessera::worker::detail
