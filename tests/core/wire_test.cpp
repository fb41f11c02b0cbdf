// The wire structs (core/wire.hpp, core/wire_runner.hpp): what one side
// writes the other reads back unchanged, an unknown key is refused with its
// name at every seam, and the enums are read in one place.
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "core/candidate.hpp"
#include "core/wire.hpp"
#include "core/wire_runner.hpp"

namespace tessera {
namespace {

// The bad_input message of `f`, or "no error".
std::string bad_input_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), Error::Kind::bad_input) << e.what();
    return e.what();
  }
  return "no error";
}

// `j` with one more key, as a sender with a misspelt field would write it.
nlohmann::json with_extra(nlohmann::json j, const std::string& key) {
  j[key] = 1;
  return j;
}

template <class T>
void expect_unknown_key_refused(const T& value, const std::string& where) {
  const std::string msg = bad_input_of([&] { (void)read_strict<T>(with_extra(nlohmann::json(value), "colour"), where); });
  EXPECT_NE(msg.find("unknown key 'colour'"), std::string::npos) << msg;
  EXPECT_NE(msg.find(where), std::string::npos) << msg;
}

WorkerEvalRequest sample_request() {
  WorkerEvalRequest r;
  r.task = task_from_shape("256x128x64", "NN", "bias");
  r.kind = CandidateKind::translation_unit;
  r.artifact = "/cache/kernels/abc.so";
  r.contract = {{"block", {128, 1, 1}}};
  r.ceiling = {700.5, "cublas at 4096^3", 3900.0, 2.5};
  r.options.verify_trials = 9;
  r.options.counter_set = "fast";
  r.options.hot = false;
  r.seed = 0xFFFFFFFFFFFFFFF1ULL;
  return r;
}

TEST(Wire, TheWorkersEvalRequestReadsBackAsSent) {
  const WorkerEvalRequest sent = sample_request();
  const auto got = read_strict<WorkerEvalRequest>(nlohmann::json::parse(nlohmann::json(sent).dump()), "eval request");
  EXPECT_EQ(got.op, WorkerOp::eval);
  EXPECT_EQ(got.task.id(), sent.task.id());
  EXPECT_EQ(got.kind, CandidateKind::translation_unit);
  EXPECT_EQ(got.artifact, sent.artifact);
  EXPECT_EQ(got.contract, sent.contract);
  EXPECT_EQ(got.ceiling.peak_tflops, 700.5);
  EXPECT_EQ(got.ceiling.peak_source, "cublas at 4096^3");
  EXPECT_EQ(got.ceiling.dram_gbps, 3900.0);
  EXPECT_EQ(got.ceiling.floor_us, 2.5);
  EXPECT_EQ(got.options.verify_trials, 9);
  EXPECT_EQ(got.options.counter_set, "fast");
  EXPECT_FALSE(got.options.hot);
  EXPECT_EQ(got.seed, sent.seed);
}

TEST(Wire, EveryMessageRefusesAnUnknownKeyByName) {
  expect_unknown_key_refused(sample_request(), "eval request");
  expect_unknown_key_refused(WorkerCommand{WorkerOp::ceiling}, "worker request");
  expect_unknown_key_refused(DeviceCeiling{1, "x", 2, 3}, "the worker's ceiling");
  expect_unknown_key_refused(CompileChildRequest{{CandidateKind::device_only, "src", "sm_90a", {"-lineinfo"}}, "/c", "k", 5},
                             "compile request");
  expect_unknown_key_refused(RunnerOpen{"/a.so", 1, 2, 3}, "runner open");
  expect_unknown_key_refused(RunnerCommand{RunnerOp::capture, 4, "00ff"}, "runner command");
  expect_unknown_key_refused(runner_error(Status::rejected, "why"), "runner event");
  expect_unknown_key_refused(SandboxOptions{}, "pool options");
  expect_unknown_key_refused(EvalOptions{}, "evaluation options");
}

TEST(Wire, NestedKeysAndWrongTypesAreNamedWithTheirPath) {
  auto j = nlohmann::json(sample_request());
  j["options"]["verify_trails"] = 8;
  EXPECT_NE(bad_input_of([&] { (void)read_strict<WorkerEvalRequest>(j, "eval request"); })
                .find("eval request.options: unknown key 'verify_trails'"),
            std::string::npos);
  j = nlohmann::json(sample_request());
  j["options"]["hot"] = "yes";
  EXPECT_NE(bad_input_of([&] { (void)read_strict<WorkerEvalRequest>(j, "eval request"); }).find("eval request.options.hot"),
            std::string::npos);
  j = nlohmann::json(sample_request());
  j["task"]["m"] = 0;
  EXPECT_NE(bad_input_of([&] { (void)read_strict<WorkerEvalRequest>(j, "eval request"); }).find("eval request.task"),
            std::string::npos);
  // nlohmann would read true as 1.0 and an unknown status as "ok"
  EXPECT_NE(bad_input_of([&] { (void)read_strict<DeviceCeiling>({{"floor_us", true}}, "c"); }).find("c.floor_us"),
            std::string::npos);
  EXPECT_NE(bad_input_of([&] { (void)read_strict<RunnerEvent>({{"event", "error"}, {"status", "fine"}}, "e"); })
                .find("e.status"),
            std::string::npos);
  EXPECT_NE(bad_input_of([&] { (void)read_strict<SandboxOptions>({{"device", 1.5}}, "o"); }).find("o.device"),
            std::string::npos);
  EXPECT_NE(bad_input_of([&] { (void)read_strict<SandboxOptions>(nlohmann::json::array(), "o"); }).find("JSON object"),
            std::string::npos);
}

TEST(Wire, MissingKeysKeepTheBaseAndTheLenientReaderIgnoresRetiredKeys) {
  EvalOptions base;
  base.verify_trials = 7;
  base.counter_set = "fast";
  const auto o = parse_eval_options({{"hot", false}}, base, "o");
  EXPECT_EQ(o.verify_trials, 7);
  EXPECT_EQ(o.counter_set, "fast");
  EXPECT_FALSE(o.hot);
  // A record on disk of another version: unknown keys are ignored, missing ones take the defaults.
  const auto old = nlohmann::json{{"peak_tflops", 600.0}, {"measured_at", "2024"}, {"uuid", "GPU-1"}}.get<DeviceCeiling>();
  EXPECT_EQ(old.peak_tflops, 600.0);
  EXPECT_EQ(old.floor_us, 0.0);
}

TEST(Wire, DefaultsAreWrittenOnceAndEveryFieldIsAKey) {
  const nlohmann::json s = SandboxOptions{};
  for (const char* key : {"mode", "device", "arch", "self_exe", "log_dir", "heartbeat_timeout_s", "compile_timeout_s",
                          "remeasure_baselines", "autotune_max_algos", "measure_peak", "remeasure_ceiling",
                          "infra_retries"})
    EXPECT_TRUE(s.contains(key)) << key;
  EXPECT_EQ(s.size(), 12u);
  EXPECT_EQ(s["mode"], "auto");
  EXPECT_EQ(s["compile_timeout_s"], kCompileTimeoutSeconds);
  EXPECT_EQ(s["infra_retries"], kDefaultSandboxInfraRetries);
  const nlohmann::json e = EvalOptions{};
  EXPECT_EQ(e.size(), 9u);
  EXPECT_EQ(e["verify_trials"], kDefaultVerifyTrials);
  EXPECT_EQ(e["counter_set"], kDefaultCounterSet);
}

TEST(Wire, OptionValuesAreValidatedWithTheirName) {
  EXPECT_NE(bad_input_of([] { (void)parse_eval_options({{"verify_trials", 0}}, {}, "o"); }).find("o.verify_trials"),
            std::string::npos);
  EXPECT_NE(bad_input_of([] { (void)parse_eval_options({{"verify_trials", kMaxVerifyTrials + 1}}, {}, "o"); })
                .find("o.verify_trials"),
            std::string::npos);
  EXPECT_NE(bad_input_of([] { (void)parse_eval_options({{"counter_set", "most"}}, {}, "o"); }).find("most"),
            std::string::npos);
  EXPECT_NE(bad_input_of([] { (void)parse_sandbox_options({{"infra_retries", -1}}, {}, "p"); }).find("p.infra_retries"),
            std::string::npos);
  EXPECT_NE(bad_input_of([] { (void)parse_sandbox_options({{"compile_timeout_s", 0}}, {}, "p"); })
                .find("p.compile_timeout_s"),
            std::string::npos);
  EXPECT_NE(bad_input_of([] { (void)parse_sandbox_options({{"mode", "turbo"}}, {}, "p"); }).find("turbo"),
            std::string::npos);
  const auto s = parse_sandbox_options({{"infra_retries", 3}, {"mode", "compile_only"}, {"log_dir", "/tmp/l"}}, {}, "p");
  EXPECT_EQ(s.infra_retries, 3);
  EXPECT_EQ(s.mode, EvalMode::compile_only);
  EXPECT_EQ(s.log_dir, "/tmp/l");
}

TEST(Wire, AClientMayAskForMoreCheckingNeverLess) {
  EvalOptions owner;
  owner.verify_trials = 4;
  EvalOptions more = owner;
  more.verify_trials = 8;
  more.counters = false;
  more.baselines = false;
  more.shape_generic = true;
  EXPECT_EQ(bad_input_of([&] { check_no_weaker(more, owner, "o"); }), "no error");
  EvalOptions fewer = owner;
  fewer.verify_trials = 2;
  EXPECT_NE(bad_input_of([&] { check_no_weaker(fewer, owner, "o"); }).find("o.verify_trials"), std::string::npos);
  EvalOptions untimed = owner;
  untimed.timing = false;
  EXPECT_NE(bad_input_of([&] { check_no_weaker(untimed, owner, "o"); }).find("o.timing"), std::string::npos);
  owner.shape_generic = true;
  EvalOptions narrow = owner;
  narrow.shape_generic = false;
  EXPECT_NE(bad_input_of([&] { check_no_weaker(narrow, owner, "o"); }).find("o.shape_generic"), std::string::npos);
}

TEST(WireEnums, ModesAreReadInOnePlace) {
  EXPECT_EQ(parse_eval_mode("auto"), EvalMode::auto_detect);
  EXPECT_EQ(parse_eval_mode("full"), EvalMode::full);
  EXPECT_EQ(parse_eval_mode("compile_only"), EvalMode::compile_only);
  for (EvalMode m : {EvalMode::auto_detect, EvalMode::full, EvalMode::compile_only})
    EXPECT_EQ(parse_eval_mode(to_string(m)), m);
  const std::string msg = bad_input_of([] { (void)parse_eval_mode("compile-only"); });
  EXPECT_NE(msg.find("unknown evaluation mode 'compile-only' (auto, full, compile_only)"), std::string::npos) << msg;
  EXPECT_EQ(nlohmann::json("full").get<EvalMode>(), EvalMode::full);
  EXPECT_NE(bad_input_of([] { (void)nlohmann::json(3).get<EvalMode>(); }), "no error");
}

TEST(WireEnums, CandidateKindsAreReadInOnePlace) {
  EXPECT_EQ(parse_candidate_kind("device_only"), CandidateKind::device_only);
  EXPECT_EQ(parse_candidate_kind("device"), CandidateKind::device_only);
  EXPECT_EQ(parse_candidate_kind("translation_unit"), CandidateKind::translation_unit);
  EXPECT_EQ(parse_candidate_kind("tu"), CandidateKind::translation_unit);
  EXPECT_EQ(to_string(CandidateKind::translation_unit), "translation_unit");
  EXPECT_EQ(nlohmann::json(CandidateKind::device_only), "device_only");
  EXPECT_NE(bad_input_of([] { (void)parse_candidate_kind("full_tu"); }).find("unknown candidate kind 'full_tu'"),
            std::string::npos);
  EXPECT_NE(bad_input_of([] { (void)parse_candidate_kind("auto"); }), "no error");  // a kind, not a choice
  EXPECT_FALSE(parse_kind_choice("auto").has_value());
  EXPECT_EQ(parse_kind_choice("tu").value(), CandidateKind::translation_unit);
  const std::string tu = "extern \"C\" int tessera_launch(const TesseraGemmParams* p, cudaStream_t s) { return 0; }";
  EXPECT_EQ(candidate_kind_for("auto", tu), CandidateKind::translation_unit);
  EXPECT_EQ(candidate_kind_for("device", tu), CandidateKind::device_only);  // as asked, not detected
  EXPECT_NE(bad_input_of([] { (void)candidate_kind_for("cubin", ""); }).find("'cubin'"), std::string::npos);
  // On the wire only the names written are read back.
  EXPECT_NE(bad_input_of([] {
              (void)read_strict<CompileRequest>({{"kind", "tu"}}, "compile request");
            }).find("compile request.kind"),
            std::string::npos);
}

TEST(WireEnums, WorkerAndRunnerNamesAreReadInOnePlace) {
  EXPECT_EQ(worker_op_of({{"op", "ceiling"}}), WorkerOp::ceiling);
  EXPECT_NE(bad_input_of([] { (void)worker_op_of({{"op", "reboot"}}); }).find("reboot"), std::string::npos);
  EXPECT_NE(bad_input_of([] { (void)worker_op_of({{"task", {}}}); }), "no error");
  EXPECT_EQ(nlohmann::json(RunnerEventKind::captured), "captured");
  EXPECT_EQ(nlohmann::json("quit").get<RunnerOp>(), RunnerOp::quit);
  EXPECT_NE(bad_input_of([] { (void)nlohmann::json("open").get<RunnerEventKind>(); }).find("'open'"), std::string::npos);
}

}  // namespace
}  // namespace tessera
