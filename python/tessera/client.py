"""A client for `tessera serve` (docs/serve.md), synchronous and asyncio.

    from tessera.client import Client
    with Client("http://127.0.0.1:8177", token="...") as c:
        record = c.evaluate("4096x4096x4096", kernel_text)
        with c.session(task="1024x1024x1024", seed=0) as s:
            step = s.step(action)

Every POST carries an Idempotency-Key that its retries reuse, so a retry
never evaluates twice. Retried: 429 and 503 (after their Retry-After),
504 (the answer is replayed once it is ready), connection failures; with
exponential backoff and jitter where the server gives no Retry-After.
Other errors raise ServeError with the server's typed error.

Needs httpx (``pip install httpx``).
"""

from __future__ import annotations

import asyncio
import email.utils
import os
import random
import time
import uuid
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence

ENV_URL = "TESSERA_SERVE_URL"
ENV_TOKEN = "TESSERA_SERVE_TOKEN"
DEFAULT_URL = "http://127.0.0.1:8177"
DEFAULT_TIMEOUT_S = 900.0  # one call, retries included; a full evaluation with counters takes tens of seconds
DEFAULT_RETRIES = 8
BACKOFF_START_S = 0.25  # first wait without a Retry-After; doubles each time
BACKOFF_MAX_S = 30.0
RETRY_STATUSES = (429, 502, 503, 504)


def _httpx():
    try:
        import httpx
    except ImportError:  # pragma: no cover - depends on the machine
        raise ImportError("tessera.client needs httpx: pip install httpx") from None
    return httpx


class ServeError(Exception):
    """A typed error from the service: ``status`` (HTTP), ``type`` and ``message``."""

    def __init__(self, status: int, type_: str, message: str):
        super().__init__(f"{status} {type_}: {message}")
        self.status = status
        self.type = type_
        self.message = message


@dataclass
class RetryPolicy:
    retries: int = DEFAULT_RETRIES
    backoff_start_s: float = BACKOFF_START_S
    backoff_max_s: float = BACKOFF_MAX_S

    def delay(self, attempt: int, retry_after: str | None) -> float:
        """Seconds to wait before retry number ``attempt`` (1-based)."""
        hinted = parse_retry_after(retry_after)
        if hinted is not None:
            # A little jitter on top, so clients refused together do not return together.
            return hinted + random.uniform(0, min(1.0, hinted * 0.25 + 0.05))
        cap = min(self.backoff_max_s, self.backoff_start_s * (2 ** (attempt - 1)))
        return random.uniform(cap / 2, cap)


def parse_retry_after(value: str | None) -> float | None:
    """Retry-After as seconds: a number, or an HTTP date; None when absent or unreadable."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _task(task: Any) -> Any:
    return task if isinstance(task, (str, dict)) or task is None else dict(task)


def _item(item: Any) -> dict:
    if isinstance(item, Mapping):
        return dict(item)
    task, action = item
    return {"task": _task(task), "action": action}


def _error_of(response) -> ServeError:
    try:
        err = response.json().get("error", {})
        return ServeError(response.status_code, err.get("type", "unknown"), err.get("message", response.text))
    except ValueError:
        return ServeError(response.status_code, "unknown", response.text[:500])


class _Base:
    def __init__(self, url: str | None, token: str | None, timeout: float, retry: RetryPolicy | None,
                 deadline_s: float | None):
        self.url = (url or os.environ.get(ENV_URL) or DEFAULT_URL).rstrip("/")
        self.token = token if token is not None else os.environ.get(ENV_TOKEN)
        self.timeout = timeout
        self.retry = retry or RetryPolicy()
        self.deadline_s = deadline_s
        self.retries_done = 0  # retries this client made (429/503/504/connection), for load reports

    def _headers(self, key: str | None) -> dict:
        h = {"Content-Type": "application/json"}
        if self.token:
            h["Authorization"] = f"Bearer {self.token}"
        if key:
            h["Idempotency-Key"] = key
        if self.deadline_s:
            h["X-Tessera-Deadline"] = str(self.deadline_s)
        return h

    @staticmethod
    def _key(method: str, key: str | None) -> str | None:
        return key or (uuid.uuid4().hex if method == "POST" else None)

    def _give_up(self, attempt: int, started: float, wait: float) -> bool:
        return attempt > self.retry.retries or time.monotonic() - started + wait > self.timeout

    def _after_failure(self, attempt: int, started: float, retry_after: str | None, failure: ServeError) -> float:
        """The wait before the next try, or raises ``failure`` when the retries are spent."""
        wait = self.retry.delay(attempt, retry_after)
        if self._give_up(attempt, started, wait):
            raise failure
        self.retries_done += 1
        return wait

    @staticmethod
    def _classify(r) -> tuple:
        """(answer, None, None) for a success, (None, Retry-After, error) for a retryable
        failure; raises the error of one that is not worth retrying."""
        if r.status_code < 400:
            json_body = r.headers.get("content-type", "").startswith("application/json")
            return (r.json() if json_body else r.text), None, None
        if r.status_code not in RETRY_STATUSES:
            raise _error_of(r)
        return None, r.headers.get("retry-after"), _error_of(r)


def _with_options(body: dict, options: dict | None) -> dict:
    if options:
        body["options"] = options
    return body


def _evaluate_body(task: Any, action: str, options: dict | None) -> dict:
    return _with_options({"task": _task(task), "action": action}, options)


def _batch_body(items: Iterable[Any], options: dict | None) -> dict:
    return _with_options({"items": [_item(i) for i in items]}, options)


def _reward_body(query: Sequence[str], prompts: Sequence[str] | None, labels: Sequence[Any] | None) -> dict:
    return {"query": list(query), "prompts": None if prompts is None else list(prompts),
            "labels": None if labels is None else list(labels)}


def _session_body(task: Any, seed: int | None, options: dict | None) -> dict:
    body: dict = {}
    if task is not None:
        body["task"] = _task(task)
    if seed is not None:
        body["seed"] = seed
    return _with_options(body, options)


class Client(_Base):
    """Synchronous client. ``token`` defaults to $TESSERA_SERVE_TOKEN, ``url`` to $TESSERA_SERVE_URL."""

    def __init__(self, url: str | None = None, token: str | None = None, timeout: float = DEFAULT_TIMEOUT_S,
                 retry: RetryPolicy | None = None, deadline_s: float | None = None):
        super().__init__(url, token, timeout, retry, deadline_s)
        httpx = _httpx()
        self._http = httpx.Client(base_url=self.url, timeout=httpx.Timeout(timeout, connect=10.0))

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def request(self, method: str, path: str, body: Any = None, idempotency_key: str | None = None) -> Any:
        """One call with retries; the decoded JSON answer, or ServeError."""
        httpx = _httpx()
        key, started, attempt = self._key(method, idempotency_key), time.monotonic(), 0
        while True:
            attempt += 1
            try:
                answer, retry_after, failure = self._classify(self._http.request(method, path, json=body,
                                                                         headers=self._headers(key)))
                if failure is None:
                    return answer
            except httpx.TransportError as e:
                retry_after, failure = None, ServeError(0, "connection", str(e))
            time.sleep(self._after_failure(attempt, started, retry_after, failure))

    def healthz(self) -> dict:
        return self.request("GET", "/healthz")

    def metrics(self) -> str:
        return self.request("GET", "/metrics")

    def evaluate(self, task: Any, action: str, options: dict | None = None) -> dict:
        """The evaluation record of ``action`` (a kernel or a tile-config JSON) on ``task``."""
        return self.request("POST", "/v1/evaluate", _evaluate_body(task, action, options))

    def evaluate_batch(self, items: Iterable[Any], options: dict | None = None) -> list[dict]:
        """Records in order; an item is (task, action) or {"task", "action", "options"}."""
        return self.request("POST", "/v1/evaluate/batch", _batch_body(items, options))["results"]

    def get_reward(self, query: Sequence[str], prompts: Sequence[str] | None = None,
                   labels: Sequence[Any] | None = None) -> dict:
        """OpenRLHF's remote reward: {"rewards", "scores", "extra_logs"}."""
        return self.request("POST", "/get_reward", _reward_body(query, prompts, labels))

    def session(self, task: Any = None, seed: int | None = None, options: dict | None = None) -> "Session":
        """A new episode (reset); use as a context manager to delete it at the end."""
        return Session(self, self.request("POST", "/v1/sessions", _session_body(task, seed, options)))


class _SessionBase:
    def __init__(self, client: Any, created: dict):
        self.client = client
        self.id = created["session_id"]
        self.observation = created["observation"]
        self.info = created["info"]
        self.path = f"/v1/sessions/{self.id}"


class Session(_SessionBase):
    """One episode on the server: ``observation`` and ``info`` of its reset, then step()."""

    def step(self, action: str) -> dict:
        """{"observation", "reward", "terminated", "truncated", "info"}; reward None when masked."""
        return self.client.request("POST", self.path + "/step", {"action": action})

    def get(self) -> dict:
        return self.client.request("GET", self.path)

    def delete(self) -> None:
        try:
            self.client.request("DELETE", self.path)
        except ServeError as e:
            if e.status != 404:
                raise

    def __enter__(self) -> "Session":
        return self

    def __exit__(self, *exc) -> None:
        self.delete()


class AsyncClient(_Base):
    """The asyncio client: the same calls as Client, awaited."""

    def __init__(self, url: str | None = None, token: str | None = None, timeout: float = DEFAULT_TIMEOUT_S,
                 retry: RetryPolicy | None = None, deadline_s: float | None = None, max_connections: int = 100):
        super().__init__(url, token, timeout, retry, deadline_s)
        httpx = _httpx()
        self._http = httpx.AsyncClient(base_url=self.url, timeout=httpx.Timeout(timeout, connect=10.0),
                                       limits=httpx.Limits(max_connections=max_connections))

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> "AsyncClient":
        return self

    async def __aexit__(self, *exc) -> None:
        await self.aclose()

    async def request(self, method: str, path: str, body: Any = None, idempotency_key: str | None = None) -> Any:
        httpx = _httpx()
        key, started, attempt = self._key(method, idempotency_key), time.monotonic(), 0
        while True:
            attempt += 1
            try:
                answer, retry_after, failure = self._classify(await self._http.request(method, path, json=body,
                                                                         headers=self._headers(key)))
                if failure is None:
                    return answer
            except httpx.TransportError as e:
                retry_after, failure = None, ServeError(0, "connection", str(e))
            await asyncio.sleep(self._after_failure(attempt, started, retry_after, failure))

    async def healthz(self) -> dict:
        return await self.request("GET", "/healthz")

    async def metrics(self) -> str:
        return await self.request("GET", "/metrics")

    async def evaluate(self, task: Any, action: str, options: dict | None = None) -> dict:
        return await self.request("POST", "/v1/evaluate", _evaluate_body(task, action, options))

    async def evaluate_batch(self, items: Iterable[Any], options: dict | None = None) -> list[dict]:
        return (await self.request("POST", "/v1/evaluate/batch", _batch_body(items, options)))["results"]

    async def get_reward(self, query: Sequence[str], prompts: Sequence[str] | None = None,
                         labels: Sequence[Any] | None = None) -> dict:
        return await self.request("POST", "/get_reward", _reward_body(query, prompts, labels))

    async def session(self, task: Any = None, seed: int | None = None, options: dict | None = None) -> "AsyncSession":
        return AsyncSession(self, await self.request("POST", "/v1/sessions", _session_body(task, seed, options)))


class AsyncSession(_SessionBase):
    """Session for AsyncClient: the same calls, awaited."""

    async def step(self, action: str) -> dict:
        return await self.client.request("POST", self.path + "/step", {"action": action})

    async def get(self) -> dict:
        return await self.client.request("GET", self.path)

    async def delete(self) -> None:
        try:
            await self.client.request("DELETE", self.path)
        except ServeError as e:
            if e.status != 404:
                raise

    async def __aenter__(self) -> "AsyncSession":
        return self

    async def __aexit__(self, *exc) -> None:
        await self.delete()
