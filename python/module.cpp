// tessera._core: the environment's C++ core for Python. Everything crosses as
// JSON text (python/tessera/ turns it into dicts): one schema, the same as the
// records on disk and the HTTP service's. Text going out is bytes: a compiler
// log trimmed inside a UTF-8 sequence must not raise in the decoder (Python
// decodes with replacement). Every call that evaluates releases the GIL, so
// Python threads (and asyncio's executor) keep running.

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include "env/env.hpp"
#include "env/judge.hpp"
#include "env/score.hpp"
#include "core/error.hpp"
#include "core/json_read.hpp"
#include "core/wire.hpp"
#include "harness/sandbox.hpp"

namespace nb = nanobind;
using nlohmann::json;

namespace tessera::python {

namespace {

json parse_json(const std::string& text, const char* what) {
  auto j = json::parse(text.empty() ? "{}" : text, nullptr, false);
  if (j.is_discarded()) fail_bad_input(std::string(what) + " is not valid JSON");
  return j;
}

// Invalid UTF-8 (a log cut mid-character) becomes U+FFFD instead of an exception.
nb::bytes dump(const json& j) {
  const std::string s = j.dump(-1, ' ', false, json::error_handler_t::replace);
  return nb::bytes(s.data(), s.size());
}

nb::bytes bytes_of(const std::string& s) { return nb::bytes(s.data(), s.size()); }

Task task_of(const json& j) { return j.is_string() ? task_from_shape(j.get<std::string>()) : parse_task(j); }

// Every SandboxOptions key (core/wire.hpp), read strictly, but two that are
// set elsewhere: the devices are Pool's own argument (one evaluator each), and
// a judged pool's retries are its EnvConfig's (env::judging_sandbox).
SandboxOptions sandbox_options(const json& j) {
  if (j.is_object() && j.contains("device"))
    fail_bad_input("pool options: 'device' is given by Pool's devices argument (one evaluator per device)");
  if (j.is_object() && j.contains("infra_retries"))
    fail_bad_input("pool options: 'infra_retries' is the judge's: give it in evaluate_batch's config "
                   "(config={\"infra_retries\": n}) or the Environment's");
  return parse_sandbox_options(j, SandboxOptions{}, "pool options");
}

// {"source", "task", "name"?, "kind"? (auto, device_only, translation_unit, device, tu)}
EvalRequest request_of(const json& j) {
  if (!j.is_object() || !j.contains("source") || !j.contains("task"))
    fail_bad_input("each evaluation request needs \"source\" and \"task\"");
  static constexpr const char* kKeys[] = {"source", "task", "name", "kind"};
  reject_unknown_keys(j, kKeys, "evaluation request");
  EvalRequest r;
  r.candidate.source = j.at("source").get<std::string>();
  r.candidate.name = j.value("name", std::string());
  r.candidate.kind = candidate_kind_for(j.value("kind", std::string("auto")), r.candidate.source);
  r.task = task_of(j.at("task"));
  validate(r.task);
  return r;
}

// The EnvConfig Pool.evaluate_batch judges under: the given one, or (none
// given) the environment's retries and reward with the harness's evaluation
// defaults; the call's options on top.
env::EnvConfig batch_config(const std::string& config_json, const std::string& options_json) {
  env::EnvConfig c;
  if (config_json.empty()) c.eval = EvalOptions{};
  else c = env::EnvConfig::from_json(parse_json(config_json, "config"));
  return env::with_eval_options(
      c, env::eval_options_from_json(parse_json(options_json, "evaluation options"), env::judged_eval_options(c)));
}

// A kernel given by trusted code, not a policy's text: nothing to parse.
env::ParsedRequest kernel_request(EvalRequest r) {
  env::ParsedRequest p;
  p.action.ok = true;
  p.action.kind = to_string(r.candidate.kind);
  p.action.candidate = std::move(r.candidate);
  p.task = std::move(r.task);
  return p;
}

struct Pool {
  std::shared_ptr<EvaluatorPool> pool;

  // Every evaluation of a Python pool is judged (env/judge.hpp), which retries.
  Pool(const std::vector<int>& devices, const std::string& options_json)
      : pool(make_pool(env::judging_sandbox(sandbox_options(parse_json(options_json, "pool options"))), devices)) {}

  nb::bytes evaluate_batch(const std::string& requests_json, const std::string& options_json,
                           const std::string& config_json) {
    const json reqs = parse_json(requests_json, "requests");
    if (!reqs.is_array()) fail_bad_input("evaluate_batch takes a list of requests");
    std::vector<env::ParsedRequest> batch;
    for (const auto& r : reqs) batch.push_back(kernel_request(request_of(r)));
    const env::EnvConfig config = batch_config(config_json, options_json);
    std::vector<env::Verdict> verdicts;
    {
      nb::gil_scoped_release unlocked;
      verdicts = env::judge_parsed(std::move(batch), config, *pool);
    }
    json out = json::array();
    for (const auto& v : verdicts) out.push_back(v.record());
    return dump(out);
  }

  std::vector<std::string> describe() const {
    std::vector<std::string> out;
    for (std::size_t i = 0; i < pool->size(); ++i) out.push_back(pool->evaluator(i).describe());
    return out;
  }
};

struct Env {
  std::unique_ptr<env::Environment> e;

  Env(const std::string& config_json, Pool& pool)
      : e(std::make_unique<env::Environment>(env::EnvConfig::from_json(parse_json(config_json, "config")), pool.pool)) {}

  std::tuple<nb::bytes, nb::bytes> reset(const std::optional<std::string>& task_json, std::uint64_t seed,
                                             const std::string& options_json) {
    std::optional<Task> task;
    if (task_json) task = task_of(parse_json(*task_json, "task"));
    const json options = parse_json(options_json, "options");
    env::ResetResult r;
    {
      nb::gil_scoped_release unlocked;
      r = e->reset(task, seed, options);
    }
    return {bytes_of(r.observation), dump(r.info)};
  }

  std::tuple<nb::bytes, std::optional<double>, bool, bool, nb::bytes> step(const std::string& action) {
    env::StepResult r;
    {
      nb::gil_scoped_release unlocked;
      r = e->step(action);
    }
    return {bytes_of(r.observation), r.reward, r.terminated, r.truncated, dump(r.info)};
  }

  nb::bytes history() const {
    json out = json::array();
    for (const auto& t : e->history())
      out.push_back({{"turn", t.turn},
                     {"action", t.action},
                     {"action_kind", t.action_kind},
                     {"source", t.source},
                     {"result", t.result ? json(*t.result) : json(nullptr)},
                     {"reward", t.reward.components}});
    return dump(out);
  }
};

nb::bytes parse_action_json(const std::string& text, const std::optional<std::string>& previous,
                              const std::string& task_json, const std::string& actions_json) {
  const auto p = env::parse_action(text, previous, task_of(parse_json(task_json, "task")),
                                   env::ActionSpace::from_json(parse_json(actions_json, "actions")));
  return dump({{"ok", p.ok},
               {"kind", p.kind},
               {"error", p.error},
               {"source", p.candidate.source},
               {"name", p.candidate.name},
               {"tile_config", p.tile_config},
               {"fuzzy_matches", p.fuzzy_matches}});
}

// [{"action", "task", "previous"?}] -> [{"reward", "info"}]
nb::bytes score_actions_json(const std::string& requests_json, const std::string& config_json, Pool& pool) {
  const json reqs = parse_json(requests_json, "requests");
  if (!reqs.is_array()) fail_bad_input("score_actions takes a list of requests");
  std::vector<env::ScoreRequest> requests;
  for (const auto& r : reqs) {
    env::ScoreRequest s{r.at("action").get<std::string>(), task_of(r.at("task")), std::nullopt};
    if (r.contains("previous") && !r["previous"].is_null()) s.previous_source = r["previous"].get<std::string>();
    requests.push_back(std::move(s));
  }
  const auto config = env::EnvConfig::from_json(parse_json(config_json, "config"));
  std::vector<env::Scored> scored;
  {
    nb::gil_scoped_release unlocked;
    scored = env::score_actions(requests, config, pool.pool);
  }
  json out = json::array();
  for (const auto& s : scored) out.push_back({{"reward", s.reward ? json(*s.reward) : json(nullptr)}, {"info", s.info}});
  return dump(out);
}

}  // namespace

}  // namespace tessera::python

NB_MODULE(_core, m) {
  using namespace tessera::python;
  m.doc() = "tessera's C++ core: evaluator pools, the RL environment, action parsing and scoring (JSON in and out)";
  // bad_input is the caller's mistake (ValueError); the rest is tessera's or the machine's.
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const tessera::Error& e) {
      if (e.kind() == tessera::Error::Kind::bad_input) PyErr_SetString(PyExc_ValueError, e.what());
      else PyErr_SetString(PyExc_RuntimeError, e.what());
    } catch (const nlohmann::json::exception& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    }
  });

  nb::class_<Pool>(m, "Pool")
      .def(nb::init<const std::vector<int>&, const std::string&>(), nb::arg("devices"), nb::arg("options_json"))
      .def("evaluate_batch", &Pool::evaluate_batch, nb::arg("requests_json"), nb::arg("options_json"),
           nb::arg("config_json"))
      .def("describe", &Pool::describe)
      .def("size", [](const Pool& p) { return p.pool->size(); });

  nb::class_<Env>(m, "Environment")
      .def(nb::init<const std::string&, Pool&>(), nb::arg("config_json"), nb::arg("pool"), nb::keep_alive<1, 3>())
      .def("reset", &Env::reset, nb::arg("task_json").none(), nb::arg("seed"), nb::arg("options_json"))
      .def("step", &Env::step, nb::arg("action"))
      .def("history_json", &Env::history)
      .def_prop_ro("turn", [](const Env& e) { return e.e->turn(); })
      .def_prop_ro("max_turns", [](const Env& e) { return e.e->max_turns(); })
      .def_prop_ro("done", [](const Env& e) { return e.e->done(); })
      .def_prop_ro("best_speedup", [](const Env& e) { return e.e->best_speedup(); })
      .def_prop_ro("best_turn", [](const Env& e) { return e.e->best_turn(); })
      .def("config_json", [](const Env& e) { return dump(e.e->config().to_json()); });

  m.def("parse_action", &parse_action_json, nb::arg("text"), nb::arg("previous").none(), nb::arg("task_json"),
        nb::arg("actions_json"));
  m.def("score_actions", &score_actions_json, nb::arg("requests_json"), nb::arg("config_json"), nb::arg("pool"));
  m.def("default_config", [] { return dump(tessera::env::EnvConfig{}.to_json()); });
  // The option structs' keys and defaults (core/wire.hpp), for Python to name
  // them without a copy of its own.
  m.def("default_pool_options", [] { return dump(json(tessera::SandboxOptions{})); });
  m.def("default_eval_options", [] { return dump(json(tessera::EvalOptions{})); });
  m.def("device_count", &tessera::cuda_device_count);
}
