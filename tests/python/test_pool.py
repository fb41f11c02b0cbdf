"""Pool.evaluate_batch: dict records in request order, and the GIL released while it runs."""

from __future__ import annotations

import threading
import time

from conftest import unique


def test_batch_records_in_request_order(pool, naive_kernel, wmma_kernel):
    broken = naive_kernel.replace("float acc = 0.0f;", "float acc = undefined_name;")
    records = pool.evaluate_batch(
        [unique(naive_kernel, "order_a"), {"source": unique(wmma_kernel, "order_b"), "name": "wmma"}, broken],
        task="512x512x512",
    )
    assert [r["status"] for r in records] == ["compiled", "compiled", "compile_error"]
    assert records[1]["result"]["candidate_name"] == "wmma"
    assert records[0]["result"]["task"]["m"] == 512 and records[0]["result"]["mode"] == "compile_only"
    assert "undefined_name" in records[2]["result"]["compile"]["log"]


def test_missing_task_is_a_clear_error(pool, naive_kernel):
    import pytest

    with pytest.raises(ValueError, match="no task"):
        pool.evaluate_batch([naive_kernel])


def test_evaluations_release_the_gil(pool, naive_kernel):
    # While the batch compiles (seconds of NVRTC), this thread must keep running.
    window = {}
    batch = [unique(naive_kernel, f"gil_{i}_{time.time_ns()}") for i in range(3)]

    def run():
        window["enter"] = time.monotonic()
        window["records"] = pool.evaluate_batch(batch, task="256x256x256")
        window["exit"] = time.monotonic()

    worker = threading.Thread(target=run)
    ticks = []
    worker.start()
    while worker.is_alive():
        ticks.append(time.monotonic())
        time.sleep(0.001)
    worker.join()
    inside = [t for t in ticks if window["enter"] < t < window["exit"]]
    assert [r["status"] for r in window["records"]] == ["compiled"] * 3
    # Held, the GIL would have stopped this loop for the whole call.
    assert len(inside) >= 10, (len(inside), window["exit"] - window["enter"])
