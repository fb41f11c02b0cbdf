"""SIGTERM drains `tessera serve`: the request in flight finishes, the server exits 0."""

from __future__ import annotations

import os
import threading
import time

from tessera.client_local import LocalServer

from conftest import TASK, kernel


def test_sigterm_lets_the_request_in_flight_finish(tmp_path):
    env = dict(os.environ, TESSERA_CACHE_DIR=str(tmp_path))
    server = LocalServer(["--mode", "compile_only"], env=env).start()
    result = {}
    with server.client() as c:
        # A cold compile: long enough to be in flight when the signal comes.
        t = threading.Thread(target=lambda: result.update(c.evaluate(TASK, kernel("hgemm_wmma.cu"))))
        t.start()
        while t.is_alive():
            m = c.metrics()
            if "tessera_running_evaluations 1" in m or "tessera_queue_depth 1" in m:
                break
            time.sleep(0.02)
        code = server.stop()
        t.join()
    assert result.get("status") == "compiled"
    assert code == 0
    assert any("draining" in line for line in server.log), server.log
