// What the harness reads from a worker's stdout, in arbitrary chunks: lines
// are split and classified without throwing; an answer's result and a
// ready event's protections are read as the evaluator reads them (a JSON
// error there becomes an infra_error, so only those may come out).
#include <algorithm>

#include "confine/confine.hpp"
#include "core/result.hpp"
#include "harness/detail/worker_wire.hpp"
#include "tests/fuzz/fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tessera;
  using detail::WorkerLine;
  if (size == 0) return 0;
  // The first byte sets the chunk size: reads end anywhere, mid-line included.
  const std::size_t chunk = 1 + data[0] % 64;
  std::string buffer;
  for (std::size_t at = 1; at < size; at += chunk) {
    buffer.append(reinterpret_cast<const char*>(data) + at, std::min(chunk, size - at));
    while (auto line = detail::take_line(buffer)) {
      for (const char* answer : {"result", "ready", "hello"}) {
        const WorkerLine l = detail::classify_worker_line(*line, answer);
        if (l.kind != WorkerLine::Kind::answer) continue;
        fuzz::expect_input_errors_only([&] {
          if (l.event.contains("result")) (void)l.event.at("result").get<EvalResult>();
          if (l.event.contains("protections")) (void)l.event.at("protections").get<ProtectionReport>();
          if (l.event.contains("device")) (void)l.event.at("device").get<DeviceSummary>();
        });
      }
    }
  }
  return 0;
}
