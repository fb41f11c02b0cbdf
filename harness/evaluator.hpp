#pragma once
// The harness's public entry point: candidate + task -> EvalResult.
// Search loops, the gym environment and the CLI all go through this interface;
// tests substitute fakes.
#include <memory>
#include <string>
#include <vector>

#include "core/candidate.hpp"
#include "core/result.hpp"
#include "core/task.hpp"
#include "core/wire.hpp"  // EvalOptions

namespace tessera {

class Evaluator {
public:
  virtual ~Evaluator() = default;
  // Never throws for a candidate's failure: that is a status in the result.
  virtual EvalResult evaluate(const Candidate& candidate, const Task& task, const EvalOptions& options) = 0;
  // Compiles candidates ahead of their evaluation, in parallel, into the
  // compile cache; later evaluate() calls find them there. Failures are left
  // for evaluate() to report. Default: nothing (compiles happen on demand).
  virtual void precompile(const std::vector<Candidate>& candidates) { (void)candidates; }
  // Compiles one candidate into the compile cache while another thread may be
  // inside evaluate(): it touches the compile cache only, never the GPU or the
  // worker, so a search can compile step n+1 while step n is measured.
  // Failures are left for evaluate() to report. Default: nothing.
  virtual void compile_ahead(const Candidate& candidate) { (void)candidate; }
  // Human-readable description of where evaluations run ("H100 via worker pid 123", "compile-only").
  virtual std::string describe() const = 0;
  // The GPU evaluations run on (name empty in compile-only mode without a GPU).
  // A sandboxed evaluator learns it from its worker: call start() first to
  // know it before the first evaluation.
  virtual DeviceSummary device() const = 0;
  // Starts whatever evaluate() would start on its first call (the sandbox's
  // worker), so that device() is known up front. A failure to start is left
  // for evaluate() to report. Default: nothing.
  virtual void start() {}
};

}  // namespace tessera
