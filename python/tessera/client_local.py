"""A `tessera serve` on this machine, for tests, load runs and notebooks.

    from tessera.client_local import LocalServer
    with LocalServer(["--mode", "compile_only"]) as server:
        client = server.client()
        ...

The server listens on a free loopback port; leaving the block sends it
SIGTERM (it drains: requests in flight finish) and waits for it to exit.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import Sequence

STARTUP_TIMEOUT_S = 180.0  # workers start (and measure the GPU's peak) before the server listens
STOP_TIMEOUT_S = 120.0
_LISTENING = re.compile(r"listening on (http://\S+)")


def default_binary() -> Path:
    """$TESSERA_BINARY, else the installed package's binary, else build/bin/tessera of this checkout."""
    if os.environ.get("TESSERA_BINARY"):
        return Path(os.environ["TESSERA_BINARY"])
    try:
        from ._resources import binary_path

        return Path(binary_path())
    except Exception:
        return Path(__file__).resolve().parents[2] / "build" / "bin" / "tessera"


class LocalServer:
    """Runs ``tessera serve --port 0 <args>``; ``url`` once started; output kept in ``log``."""

    def __init__(self, args: Sequence[str] = (), binary: str | os.PathLike | None = None, env: dict | None = None,
                 token: str | None = None):
        self.binary = Path(binary) if binary else default_binary()
        self.args = list(args)
        self.env = dict(os.environ if env is None else env)
        self.token = token
        if token:
            self.env["TESSERA_SERVE_TOKEN"] = token
        self.url: str | None = None
        self.log: list[str] = []
        self.proc: subprocess.Popen | None = None

    def start(self) -> "LocalServer":
        cmd = [str(self.binary), "serve", "--host", "127.0.0.1", "--port", "0", *self.args]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=self.env)
        found = threading.Event()

        def pump() -> None:
            assert self.proc is not None and self.proc.stdout is not None
            for line in self.proc.stdout:
                self.log.append(line.rstrip("\n"))
                m = _LISTENING.search(line)
                if m and not found.is_set():
                    self.url = m.group(1)
                    found.set()

        threading.Thread(target=pump, daemon=True).start()
        deadline = time.monotonic() + STARTUP_TIMEOUT_S
        while not found.wait(0.1):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError("tessera serve did not start:\n" + "\n".join(self.log[-40:]))
        return self

    def client(self, **kwargs):
        from .client import Client

        return Client(self.url, token=self.token, **kwargs)

    def async_client(self, **kwargs):
        from .client import AsyncClient

        return AsyncClient(self.url, token=self.token, **kwargs)

    def stop(self, sig: int = signal.SIGTERM) -> int | None:
        """Signals the server (SIGTERM: drain) and waits; the exit code."""
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode

    def __enter__(self) -> "LocalServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
