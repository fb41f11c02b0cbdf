#!/usr/bin/env python3
"""Load and fault test of `tessera serve` (docs/serve.md, "Load test").

Starts `tessera serve` in compile-only mode on loopback (or uses --url),
then runs --clients concurrent asyncio clients through --requests requests
that mix single evaluations, batches, OpenRLHF get_reward calls and
sessions (create, two steps, delete), with a small queue so that overload
is answered with 429s, and kills a worker --kills times mid-load.

Checks, each must hold: every request answered (lost 0), every answer the
one its request expects (mismatched 0), the server evaluated exactly what
was asked (duplicated 0: retries replayed, never re-evaluated), no request
timed out or hit its deadline, overload answered with 429s, every killed
worker replaced with nothing lost. Prints the table and p50/p99 latency;
exits 1 when a check fails. --json writes the figures.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import re
import sys
import time
import types
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _import_client():
    """tessera.client from the installed package, else from this checkout (no build needed: it is pure Python)."""
    try:
        import tessera.client  # noqa: F401
    except ImportError:
        for name in [m for m in sys.modules if m == "tessera" or m.startswith("tessera.")]:
            del sys.modules[name]
        pkg = types.ModuleType("tessera")
        pkg.__path__ = [str(ROOT / "python" / "tessera")]
        sys.modules["tessera"] = pkg
    import tessera.client as client
    import tessera.client_local as local

    return client, local


client_mod, local_mod = _import_client()

TASK = "256x256x256"
PROMPT = "Write a device-only HGEMM kernel for the task.\n"
JUNK = "I would rather not write a kernel today."
OP_MIX = {"evaluate": 0.4, "batch": 0.2, "reward": 0.2, "session": 0.2}  # shares of logical operations
REQUESTS_PER_OP = {"evaluate": 1, "batch": 1, "reward": 1, "session": 4}  # HTTP requests each makes
EVALS_PER_OP = {"evaluate": 1, "batch": 4, "reward": 2, "session": 2}  # evaluations each asks for


def kernels() -> list[str]:
    """Two distinct device-only kernels: compiled once in the warm-up, cache hits after."""
    naive = (ROOT / "examples" / "hgemm_naive.cu").read_text()
    wmma = (ROOT / "examples" / "hgemm_wmma.cu").read_text()
    return [f"```cuda\n{naive}\n```", f"```cuda\n{wmma}\n```"]


def pct(values: list[float], p: float) -> float:
    if not values:
        return 0.0
    s = sorted(values)
    return s[min(len(s) - 1, int(round(p / 100 * (len(s) - 1))))]


def parse_metrics(text: str) -> dict[str, float]:
    out: dict[str, float] = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            name, _, value = line.rpartition(" ")
            out[name] = float(value)
    return out


def metric_sum(m: dict[str, float], prefix: str) -> float:
    return sum(v for k, v in m.items() if k.startswith(prefix))


def answered_with(before: dict[str, float], after: dict[str, float], code: int) -> int:
    """Responses with status `code` between the two scrapes, over every endpoint."""
    mark = f'code="{code}"'
    return int(sum(v - before.get(k, 0) for k, v in after.items()
                   if k.startswith("tessera_requests_total") and mark in k))


class Load:
    def __init__(self, client, args):
        self.c = client
        self.args = args
        self.k = kernels()
        self.latency: dict[str, list[float]] = defaultdict(list)
        self.answered = Counter()
        self.lost: list[str] = []
        self.mismatched: list[str] = []
        self.statuses = Counter()
        self.requests_done = 0
        self.evals_asked = 0

    def expect(self, ok: bool, what: str) -> None:
        if not ok:
            self.mismatched.append(what)

    def record(self, rec: dict, want: str, what: str) -> None:
        self.statuses[rec.get("status")] += 1
        self.expect(rec.get("status") == want, f"{what}: status {rec.get('status')} (want {want})")

    async def op_evaluate(self, i: int) -> None:
        good = i % 3 != 2
        action = self.k[i % 2] if good else JUNK
        rec = await self.c.evaluate(TASK, action)
        self.record(rec, "compiled" if good else "format_error", f"evaluate {i}")

    async def op_batch(self, i: int) -> None:
        items = [(TASK, self.k[0]), (TASK, JUNK), (TASK, self.k[1]), (TASK, self.k[i % 2])]
        recs = await self.c.evaluate_batch(items)
        self.expect(len(recs) == 4, f"batch {i}: {len(recs)} records")
        for j, (rec, want) in enumerate(zip(recs, ["compiled", "format_error", "compiled", "compiled"])):
            self.record(rec, want, f"batch {i} item {j}")

    async def op_reward(self, i: int) -> None:
        r = await self.c.get_reward([PROMPT + self.k[i % 2], PROMPT + JUNK], [PROMPT, PROMPT], [TASK, TASK])
        self.expect(len(r["rewards"]) == 2 and len(r["scores"]) == 2, f"reward {i}: lengths")
        self.expect(r["extra_logs"]["format_ok"] == [1, 0], f"reward {i}: format_ok {r['extra_logs']['format_ok']}")
        self.expect(r["extra_logs"]["masked"] == [0, 0], f"reward {i}: masked {r['extra_logs']['masked']}")

    async def op_session(self, i: int) -> None:
        s = await self.c.session(task=TASK, seed=i)
        a = await s.step(self.k[i % 2])
        b = await s.step(JUNK)
        await s.delete()
        self.expect(a["reward"] is not None and a["info"].get("turn") == 1, f"session {i} step 1: {a.get('info')}")
        self.expect(b["reward"] is not None and b["info"].get("turn") == 2, f"session {i} step 2")

    async def run_op(self, kind: str, i: int) -> None:
        t0 = time.perf_counter()
        try:
            await getattr(self, "op_" + kind)(i)
            self.answered[kind] += 1
        except Exception as e:  # a request that got no answer: lost
            self.lost.append(f"{kind} {i}: {type(e).__name__}: {e}")
            return
        self.latency[kind].append((time.perf_counter() - t0) * 1000)
        self.requests_done += REQUESTS_PER_OP[kind]
        self.evals_asked += EVALS_PER_OP[kind]


def plan(total_requests: int, seed: int) -> list[str]:
    """Operations in a shuffled order whose HTTP requests add up to at least `total_requests`."""
    rng = random.Random(seed)
    ops: list[str] = []
    n = 0
    kinds, weights = zip(*OP_MIX.items())
    while n < total_requests:
        k = rng.choices(kinds, weights)[0]
        ops.append(k)
        n += REQUESTS_PER_OP[k]
    return ops


async def killer(load: Load, total: int, kills: int, workers: int) -> int:
    """Kills a worker each time another 1/(kills+1) of the requests is done."""
    done = 0
    for n in range(kills):
        target = total * (n + 1) / (kills + 1)
        while load.requests_done < target:
            await asyncio.sleep(0.05)
        await load.c.request("POST", "/v1/admin/kill_worker", {"worker": n % workers})
        done += 1
    return done


class LoadAborted(Exception):
    """The run cannot finish: the server died, or it ran past its wall-clock limit."""


async def watchdog(server, max_wall_s: float) -> None:
    """Returns never; raises once the started server has exited or the run is past --max-wall-s.

    The clients retry refused connections for as long as --timeout allows, so without it a
    server that died mid-load (or a load that stopped moving) would hang the test instead of
    failing it."""
    t0 = time.monotonic()
    while True:
        await asyncio.sleep(0.25)
        if server is not None and server.proc.poll() is not None:
            tail = "\n".join(server.log[-20:])
            raise LoadAborted(f"tessera serve exited with code {server.proc.returncode} mid-load; its last lines:\n{tail}")
        if time.monotonic() - t0 > max_wall_s:
            raise LoadAborted(f"the load test ran past --max-wall-s {max_wall_s:.0f} s")


async def drive(url: str, token: str | None, args, server=None) -> dict:
    """The load against `url`, given up (LoadAborted) as soon as the watchdog says it cannot finish."""
    main = asyncio.create_task(_drive(url, token, args))
    guard = asyncio.create_task(watchdog(server, args.max_wall_s))
    done, _ = await asyncio.wait({main, guard}, return_when=asyncio.FIRST_COMPLETED)
    if main in done:
        guard.cancel()
        return main.result()
    main.cancel()
    try:
        await main
    except BaseException:  # noqa: BLE001 - its cancellation, or what the dead server made it raise
        pass
    guard.result()  # raises LoadAborted
    raise AssertionError("the watchdog returned")


async def _drive(url: str, token: str | None, args) -> dict:
    retry = client_mod.RetryPolicy(retries=1000)  # the load honours Retry-After for as long as it takes
    async with client_mod.AsyncClient(url, token=token, retry=retry, timeout=args.timeout,
                                      max_connections=args.clients + 8) as c:
        load = Load(c, args)
        for k in load.k:  # warm-up: each kernel compiled once, outside the figures
            rec = await c.evaluate(TASK, k)
            if rec["status"] != "compiled":
                raise SystemExit(f"warm-up: a kernel did not compile: {json.dumps(rec)[:2000]}")
        before = parse_metrics(await c.metrics())
        ops = plan(args.requests, args.seed)
        total = sum(REQUESTS_PER_OP[k] for k in ops)
        queue: asyncio.Queue = asyncio.Queue()
        # Everyone starts with a batch at once: the queue overflows from the first moment.
        burst = ["batch"] * args.clients
        for i, k in enumerate(burst + ops):
            queue.put_nowait((k, i))
        total += REQUESTS_PER_OP["batch"] * len(burst)

        async def worker() -> None:
            while not queue.empty():
                kind, i = queue.get_nowait()
                await load.run_op(kind, i)

        t0 = time.perf_counter()
        kill_task = asyncio.create_task(killer(load, total, args.kills, args.workers))
        await asyncio.gather(*(worker() for _ in range(args.clients)))
        kills = await kill_task
        wall = time.perf_counter() - t0
        after = parse_metrics(await c.metrics())

    evaluated = metric_sum(after, "tessera_evaluations_total") - metric_sum(before, "tessera_evaluations_total")
    all_lat = [v for vs in load.latency.values() for v in vs]
    return {
        "requests": load.requests_done,
        "clients": args.clients,
        "lost": len(load.lost),
        "duplicated": int(evaluated - load.evals_asked),
        "mismatched": len(load.mismatched),
        "evaluations": int(evaluated),
        "http_429": answered_with(before, after, 429),
        "http_504": answered_with(before, after, 504),
        "client_retries": c.retries_done,
        "kills": kills,
        "replaced": int(after.get("tessera_worker_replacements_total", 0) - before.get("tessera_worker_replacements_total", 0)),
        "infra_error": load.statuses.get("infra_error", 0),
        "p50_ms": round(pct(all_lat, 50), 1),
        "p99_ms": round(pct(all_lat, 99), 1),
        "per_op": {k: {"ops": len(v), "p50_ms": round(pct(v, 50), 1), "p99_ms": round(pct(v, 99), 1)}
                   for k, v in sorted(load.latency.items())},
        "wall_s": round(wall, 1),
        "statuses": dict(load.statuses),
        "examples": {"lost": load.lost[:5], "mismatched": load.mismatched[:5]},
    }


def checks(r: dict, args) -> list[str]:
    failed = []
    for key in ("lost", "duplicated", "mismatched", "http_504", "infra_error"):
        if r[key] != 0:
            failed.append(f"{key} = {r[key]} (must be 0)")
    if r["requests"] < args.requests:
        failed.append(f"only {r['requests']} requests answered (asked for {args.requests})")
    if r["http_429"] == 0:
        failed.append("no 429: the queue never overflowed (overload was not exercised)")
    if r["replaced"] != r["kills"]:
        failed.append(f"{r['kills']} workers killed but {r['replaced']} replaced")
    return failed


def table(r: dict) -> str:
    cols = ["requests", "clients", "lost", "duplicated", "mismatched", "http_429", "http_504", "kills", "replaced",
            "p50_ms", "p99_ms", "wall_s"]
    head = "| " + " | ".join(cols) + " |"
    rule = "|" + "|".join("---:" for _ in cols) + "|"
    row = "| " + " | ".join(str(r[c]) for c in cols) + " |"
    ops = "\n".join(f"  {k:<9} {v['ops']:>5} ops  p50 {v['p50_ms']:>8.1f} ms  p99 {v['p99_ms']:>8.1f} ms"
                    for k, v in r["per_op"].items())
    return f"{head}\n{rule}\n{row}\n\nlatency per operation (client side, retries included):\n{ops}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--url", help="an existing server (started with --fault-injection for --kills)")
    ap.add_argument("--token", help="its bearer token")
    ap.add_argument("--binary", help="the tessera binary to start (default: build/bin/tessera)")
    ap.add_argument("--clients", type=int, default=32)
    ap.add_argument("--requests", type=int, default=5000)
    ap.add_argument("--queue", type=int, default=4, help="the started server's queue (small: overload happens)")
    ap.add_argument("--workers", type=int, default=2, help="the started server's evaluator slots")
    ap.add_argument("--kills", type=int, default=3, help="workers killed mid-load")
    ap.add_argument("--timeout", type=float, default=600.0, help="seconds one request may take, retries included")
    ap.add_argument("--max-wall-s", type=float, default=1200.0,
                    help="fail (not hang) when the whole load takes longer than this")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", help="write the figures here")
    args = ap.parse_args()

    try:
        if args.url:
            result = asyncio.run(drive(args.url, args.token, args))
        else:
            serve_args = ["--mode", "compile_only", "--gpus", ",".join(str(i) for i in range(args.workers)),
                          "--queue", str(args.queue), "--fault-injection", "--retry-after", "1"]
            with local_mod.LocalServer(serve_args, binary=args.binary) as server:
                result = asyncio.run(drive(server.url, None, args, server))
    except LoadAborted as e:
        print("load test: FAILED:", e)
        return 1
    print(table(result))
    failed = checks(result, args)
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1) + "\n")
    for f in failed:
        print("FAILED:", f)
    if result["examples"]["lost"] or result["examples"]["mismatched"]:
        print("examples:", json.dumps(result["examples"], indent=1))
    print("load test:", "passed" if not failed else "FAILED")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
