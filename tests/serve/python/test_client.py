"""tessera.client against a real compile-only `tessera serve`, sync and asyncio,
and its retry policy against a scripted HTTP server."""

from __future__ import annotations

import asyncio
import http.server
import json
import threading
import time

import pytest

from tessera.client import AsyncClient, Client, RetryPolicy, ServeError, parse_retry_after

from conftest import TASK, TOKEN, kernel

JUNK = "no kernel here"


def test_evaluate_batch_and_records(server):
    with server.client() as c:
        assert c.healthz()["status"] == "ok"
        rec = c.evaluate(TASK, kernel())
        assert rec["status"] == "compiled" and rec["action_kind"] == "device_only"
        assert rec["result"]["status"] == "compiled" and rec["masked"] is False
        assert c.evaluate(TASK, JUNK)["status"] == "format_error"
        recs = c.evaluate_batch([(TASK, JUNK), (TASK, kernel()), {"task": TASK, "action": kernel("hgemm_wmma.cu")}])
        assert [r["status"] for r in recs] == ["format_error", "compiled", "compiled"]


def test_sessions_run_an_episode_and_are_deleted(server):
    with server.client() as c:
        with c.session(task=TASK, seed=3) as s:
            assert isinstance(s.observation, str) and s.observation
            step = s.step(kernel())
            assert step["info"]["turn"] == 1 and step["reward"] is not None
            assert s.get()["turn"] == 1
        with pytest.raises(ServeError) as e:
            s.get()
        assert e.value.status == 404 and e.value.type == "session_not_found"


def test_get_reward_as_openrlhf_posts_it(server):
    import httpx  # OpenRLHF's own client posts plain JSON with no headers

    prompt = "Write the kernel.\n"
    r = httpx.post(server.url + "/get_reward",
                   json={"query": [prompt + kernel(), prompt + JUNK], "prompts": [prompt, prompt], "labels": [TASK, TASK]})
    assert r.status_code == 200, r.text
    body = r.json()
    assert set(body) == {"rewards", "scores", "extra_logs"}
    assert len(body["rewards"]) == 2 and all(isinstance(x, float) for x in body["rewards"])
    assert body["extra_logs"]["format_ok"] == [1, 0]
    assert all(len(v) == 2 for v in body["extra_logs"].values())


def test_bad_token_and_bad_input_are_typed_errors_not_retried(server):
    with Client(server.url, token="wrong") as c:
        with pytest.raises(ServeError) as e:
            c.evaluate(TASK, kernel())
        assert e.value.status == 401 and c.retries_done == 0
    with server.client() as c:
        with pytest.raises(ServeError) as e:
            c.request("POST", "/v1/evaluate", {"task": "12xx", "action": "k"})
        assert e.value.status == 400 and "task" in e.value.message


def test_a_killed_worker_loses_nothing(server):
    with server.client() as c:
        before = c.metrics()
        recs = []

        def deaths():  # attempts beyond one per record: each is a kill met
            return sum(len(r["attempts"]) for r in recs) - len(recs)

        # One kill at a time: the judge retries a machine failure once, so two
        # kills pending at once could both meet one request (its retry landing
        # on the other killed slot), which is then masked, not lost, but is not
        # what this test is about (seen in CI, one run in 15).
        for worker in (0, 1):
            c.request("POST", "/v1/admin/kill_worker", {"worker": worker})
            # A slot meets its kill only when it takes work. One request at a time
            # lets whichever slot wakes first take every one (40 in a row, seen in
            # CI), so the work goes in batches, which queue several items at once
            # for both slots; until the kill has been met (bounded).
            met = deaths() + 1
            while deaths() < met and len(recs) < 80:
                recs += c.evaluate_batch([(TASK, kernel())] * 4)
        assert all(r["status"] == "compiled" for r in recs)
        assert deaths() == 2  # two of them died once and ran again
        assert _replacements(c.metrics()) - _replacements(before) == 2


def _replacements(metrics: str) -> float:
    line = next(l for l in metrics.splitlines() if l.startswith("tessera_worker_replacements_total"))
    return float(line.split()[-1])


def test_async_client_runs_concurrent_calls(server):
    async def run():
        async with server.async_client() as c:
            recs = await asyncio.gather(*(c.evaluate(TASK, kernel()) for _ in range(12)))
            s = await c.session(task=TASK)
            async with s:
                step = await s.step(JUNK)
            return recs, step

    recs, step = asyncio.run(run())
    assert [r["status"] for r in recs] == ["compiled"] * 12
    assert step["info"]["turn"] == 1


class _Scripted(http.server.BaseHTTPRequestHandler):
    """Answers from a script: (status, headers, body) per request; records each request's key."""

    script: list = []
    seen: list = []

    def do_POST(self):  # noqa: N802 - http.server's naming
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        type(self).seen.append((time.monotonic(), self.headers.get("Idempotency-Key")))
        status, headers, body = type(self).script.pop(0)
        data = json.dumps(body).encode()
        self.send_response(status)
        for k, v in headers.items():
            self.send_header(k, v)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


@pytest.fixture
def scripted():
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Scripted)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    _Scripted.seen = []
    yield srv, f"http://127.0.0.1:{srv.server_port}"
    srv.shutdown()


def test_retries_honour_retry_after_and_keep_the_idempotency_key(scripted):
    _, url = scripted
    busy = {"error": {"type": "overloaded", "message": "full"}}
    _Scripted.script = [(429, {"Retry-After": "1"}, busy), (503, {"Retry-After": "0"}, busy), (200, {}, {"ok": 1})]
    with Client(url, token=TOKEN) as c:
        assert c.request("POST", "/v1/evaluate", {}) == {"ok": 1}
    (t0, k0), (t1, k1), (_, k2) = _Scripted.seen
    assert t1 - t0 >= 1.0, "waited for Retry-After"
    assert k0 and k0 == k1 == k2, "every retry carries the first try's key"


def test_retries_give_up_with_the_servers_error(scripted):
    _, url = scripted
    busy = {"error": {"type": "overloaded", "message": "full"}}
    _Scripted.script = [(429, {"Retry-After": "0"}, busy)] * 3
    with Client(url, retry=RetryPolicy(retries=2)) as c:
        with pytest.raises(ServeError) as e:
            c.request("POST", "/v1/evaluate", {})
    assert e.value.status == 429 and e.value.type == "overloaded" and len(_Scripted.seen) == 3


def test_async_retry_honours_retry_after(scripted):
    _, url = scripted
    _Scripted.script = [(429, {"Retry-After": "1"}, {}), (200, {}, {"done": True})]

    async def run():
        async with AsyncClient(url) as c:
            return await c.request("POST", "/get_reward", {})

    assert asyncio.run(run()) == {"done": True}
    assert _Scripted.seen[1][0] - _Scripted.seen[0][0] >= 1.0


def test_retry_after_forms():
    assert parse_retry_after("2") == 2.0
    assert parse_retry_after(None) is None and parse_retry_after("soon") is None
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT") == 0.0  # a date in the past: now
    assert 0.5 <= RetryPolicy(backoff_start_s=1).delay(1, None) <= 1.0
