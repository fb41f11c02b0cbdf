#include "fakes.hpp"

#include <thread>

#include <gtest/gtest.h>

#include "core/error.hpp"

namespace tessera::serve::testing {

int Ledger::count(const std::string& source) {
  std::lock_guard g(mu);
  return evaluations[source];
}

int Ledger::total() {
  std::lock_guard g(mu);
  int n = 0;
  for (const auto& [k, v] : evaluations) n += v;
  return n;
}

EvalResult FakeEvaluator::evaluate(const Candidate& c, const Task& task, const EvalOptions&) {
  {
    std::lock_guard g(ledger_->mu);
    ++ledger_->evaluations[c.source];
  }
  const int now = ++ledger_->running;
  for (int seen = ledger_->max_running; now > seen && !ledger_->max_running.compare_exchange_weak(seen, now);) {}
  struct Leave {
    Ledger& l;
    ~Leave() { --l.running; }
  } leave{*ledger_};
  if (auto at = c.source.find("wait:"); at != std::string::npos)
    std::this_thread::sleep_for(std::chrono::milliseconds(std::stoi(c.source.substr(at + 5))));
  if (c.source.find("block") != std::string::npos) ledger_->opened.wait();
  if (c.source.find("throw") != std::string::npos) throw std::runtime_error("the worker's pipe broke");
  EvalResult r;
  r.task = task;
  r.candidate_name = c.name;
  r.mode = "full";
  r.phase_ms = {{"compile", 2.0}, {"verify", 3.0}, {"timing", 4.0}};
  r.wall_ms = 9.0;
  if (c.source.find("compile_error") != std::string::npos) r.status = Status::compile_error;
  else if (c.source.find("rejected") != std::string::npos) r.status = Status::rejected;
  else if (c.source.find("infra") != std::string::npos) r.status = Status::infra_error;
  else {
    r.status = Status::ok;
    r.cold.median_us = 10;
    r.best_baseline_us = 15;
    r.speedup = 1.5;
  }
  return r;
}

std::shared_ptr<EvaluatorSlots> fake_slots(const std::shared_ptr<Ledger>& ledger, int n) {
  std::vector<EvaluatorFactory> f;
  for (int i = 0; i < n; ++i) {
    f.push_back([ledger] {
      ++ledger->made;
      return std::make_unique<FakeEvaluator>(ledger);
    });
  }
  return std::make_shared<EvaluatorSlots>(f);
}

namespace {
// Three turns; each step evaluates its action through the pool.
class FakeEpisode final : public Episode {
public:
  explicit FakeEpisode(std::shared_ptr<EvaluatorPool> pool) : pool_(std::move(pool)) {}
  env::ResetResult reset(std::optional<Task> task, std::uint64_t seed, const nlohmann::json& options) override {
    if (options.contains("bad")) fail_bad_input("unknown option 'bad'");
    task_ = task.value_or(task_from_shape("128x128x128"));
    return {"write a kernel for " + task_.id(), {{"task", to_json(task_)}, {"seed", seed}}};
  }
  env::StepResult step(const std::string& action) override {
    ++turn_;
    env::StepResult s;
    s.terminated = turn_ >= 3;
    if (action == "not a kernel") {
      s.reward = -1.0;
      s.observation = "format failure";
      s.info = {{"turn", turn_}, {"masked", false}};
      return s;
    }
    Candidate c;
    c.source = action;
    EvalResult r = pool_->evaluate_async({c, task_}, {}).get();
    s.reward = r.status == Status::ok ? 1.4 : -0.5;
    s.observation = "status " + to_string(r.status);
    s.info = {{"turn", turn_}, {"result", r}, {"masked", false}};
    return s;
  }
  bool done() const override { return turn_ >= 3; }
  nlohmann::json summary() const override { return {{"task", to_json(task_)}, {"turn", turn_}, {"done", done()}}; }

private:
  std::shared_ptr<EvaluatorPool> pool_;
  Task task_;
  int turn_ = 0;
};
}  // namespace

Backend fake_backend(const std::shared_ptr<Ledger>& ledger, int slots) {
  Backend b;
  b.slots = fake_slots(ledger, slots);
  b.parse = [](const std::string& text, const Task&, const env::ActionSpace&) {
    env::ParsedAction a;
    if (text == "not a kernel") {
      a.error = "no kernel in the action";
      return a;
    }
    a.ok = true;
    a.kind = "device_only";
    a.candidate.source = text;
    return a;
  };
  auto pool = b.slots->pool();
  b.new_episode = [pool]() -> std::unique_ptr<Episode> { return std::make_unique<FakeEpisode>(pool); };
  return b;
}

std::future<HttpResponse> call_async(Service& service, const std::string& method, const std::string& target,
                                     const std::string& body, std::map<std::string, std::string> headers) {
  auto p = std::make_shared<std::promise<HttpResponse>>();
  auto f = p->get_future();
  HttpRequest r;
  r.method = method;
  r.target = target;
  r.body = body;
  r.headers = std::move(headers);
  service.handle(std::move(r), [p](HttpResponse resp) { p->set_value(std::move(resp)); });
  return f;
}

HttpResponse call(Service& service, const std::string& method, const std::string& target, const std::string& body,
                  std::map<std::string, std::string> headers) {
  auto f = call_async(service, method, target, body, std::move(headers));
  if (f.wait_for(std::chrono::seconds(60)) != std::future_status::ready) {
    ADD_FAILURE() << method << " " << target << " got no reply";
    return HttpResponse{599, "", "", {}, false};
  }
  return f.get();
}

ServeOptions test_options() {
  ServeOptions o;
  o.port = 0;
  o.compile_threads = 2;
  o.queue_capacity = 16;
  o.max_batch = 8;
  return o;
}

std::string eval_body(const std::string& action, const std::string& task) {
  return nlohmann::json{{"task", task}, {"action", action}}.dump();
}

}  // namespace tessera::serve::testing
