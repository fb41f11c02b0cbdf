// A stand-in for the driver's libnvidia-ml.so.1 with the entry points
// `tessera bench scale` resolves, each answering a distinct figure in NVML's
// units, so a test can tell every reading from its neighbours (a reading
// that took another call's value shows up as the wrong number).
extern "C" {
using Return = int;
using Device = void*;
struct Utilization {
  unsigned gpu, memory;
};
Return nvmlInit_v2() { return 0; }
Return nvmlShutdown() { return 0; }
const char* nvmlErrorString(Return) { return "fake"; }
Return nvmlDeviceGetHandleByPciBusId_v2(const char*, Device* d) {
  static int device;
  *d = &device;
  return 0;
}
Return nvmlDeviceGetName(Device, char* buf, unsigned n) {
  const char name[] = "Fake GPU";
  for (unsigned i = 0; i < n && i < sizeof name; ++i) buf[i] = name[i];
  return 0;
}
Return nvmlDeviceGetClockInfo(Device, int clock, unsigned* mhz) {  // 1: SM, 2: memory
  *mhz = clock == 1 ? 1755 : clock == 2 ? 2619 : 0;
  return 0;
}
Return nvmlDeviceGetPowerUsage(Device, unsigned* mw) {
  *mw = 512250;
  return 0;
}
Return nvmlDeviceGetEnforcedPowerLimit(Device, unsigned* mw) {
  *mw = 700000;
  return 0;
}
Return nvmlDeviceGetTemperature(Device, int, unsigned* c) {
  *c = 61;
  return 0;
}
Return nvmlDeviceGetUtilizationRates(Device, Utilization* u) {
  u->gpu = 87;
  u->memory = 43;
  return 0;
}
Return nvmlDeviceGetCurrentClocksEventReasons(Device, unsigned long long* r) {
  *r = 0x4;  // sw_power_cap
  return 0;
}
}
