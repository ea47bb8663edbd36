"""Workers: retries with backoff on UnavailableError, permanent failures, bounded concurrency, notify."""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from servicekit import wait_for, write_config

from imgcheck.errors import BadInputError, UnavailableError
from imgcheck.service.config import load_config
from imgcheck.service.events import PushEvent
from imgcheck.service.metrics import Metrics
from imgcheck.service.notify import Notifier
from imgcheck.service.store import FleetResult, Store
from imgcheck.service.worker import WorkerPool, backoff_delay, registry_reference

D = ["sha256:" + str(i) * 64 for i in range(1, 6)]


@pytest.fixture
def setup(tmp_path):
    config = load_config(
        write_config(
            str(tmp_path / "c.toml"), "127.0.0.1:1", database=str(tmp_path / "q.db"), extra_server="max_attempts = 3"
        )
    )
    store = Store(config.database)
    yield config, store
    store.close()


def ok_results(config, job):
    return [
        FleetResult(fleet="lab", verdict="fail", report_json='{"verdict": "fail", "findings": []}'),
        FleetResult(fleet="prod", verdict="ok", report_json='{"verdict": "ok"}'),
    ]


def test_unavailable_registry_is_retried_with_growing_backoff_then_given_up(setup):
    config, store = setup
    store.enqueue("main", [PushEvent("a/b", D[0])])
    calls = []

    def down(config, job):
        calls.append(job.attempts)
        raise UnavailableError("127.0.0.1:1: connection refused")

    metrics = Metrics(store.counts)
    pool = WorkerPool(config, store, metrics, check=down)
    delays = []
    for attempt in (1, 2, 3):
        job = store.claim(pool.owner, 60, config.max_attempts, now=time.time() + 1000 * attempt)
        assert job is not None and job.attempts == attempt
        pool.run(job)
        row = store.jobs_for_digest(D[0])[0]
        if attempt < 3:
            assert row["state"] == "queued" and "connection refused" in row["last_error"]
            with sqlite3.connect(store.path) as conn:
                (delay,) = conn.execute("SELECT next_attempt_at - updated_at FROM jobs").fetchone()
            delays.append(delay)
    assert calls == [1, 2, 3]
    assert store.jobs_for_digest(D[0])[0]["state"] == "failed"
    assert "gave up after 3 attempts" in store.jobs_for_digest(D[0])[0]["last_error"]
    # exponential: the second wait is about twice the first (jitter is +-10%)
    assert delays[1] > delays[0] * 1.5
    assert backoff_delay(config, 50) <= config.backoff_max_seconds * 1.1


def test_bad_input_fails_at_once_and_bugs_are_recorded(setup):
    config, store = setup
    store.enqueue("main", [PushEvent("a/b", D[0]), PushEvent("a/b", D[1])])

    def corrupt(config, job):
        if job.digest == D[0]:
            raise BadInputError("layer digest mismatch")
        raise KeyError("boom")

    pool = WorkerPool(config, store, check=corrupt)
    for _ in range(2):
        pool.run(store.claim(pool.owner, 60, 3))
    rows = {r["digest"]: r for r in store.recent()}
    assert rows[D[0]]["state"] == "failed" and rows[D[0]]["attempts"] == 1
    assert "digest mismatch" in rows[D[0]]["last_error"]
    assert rows[D[1]]["state"] == "failed" and "internal error: KeyError" in rows[D[1]]["last_error"]


def test_pool_runs_at_most_workers_checks_at_once(setup):
    config, store = setup  # workers = 2
    store.enqueue("main", [PushEvent("a/b", d) for d in D])
    active, peak, lock, release = [0], [0], threading.Lock(), threading.Event()

    def slow(config, job):
        with lock:
            active[0] += 1
            peak[0] = max(peak[0], active[0])
        release.wait(30)
        with lock:
            active[0] -= 1
        return ok_results(config, job)

    pool = WorkerPool(config, store, check=slow)
    pool.start()
    try:
        wait_for(lambda: active[0] == 2, 10, "two checks running")
        assert store.counts()["running"] == 2 and store.counts()["queued"] == 3
        release.set()
        wait_for(lambda: store.counts()["done"] == 5, 20, "all jobs done")
    finally:
        release.set()
        pool.stop()
    assert peak[0] == 2
    assert all(len(store.results_for_job(j["id"])) == 2 for j in store.recent())


def test_registry_reference_uses_the_configured_host_not_the_payload(setup):
    config, store = setup
    store.enqueue("main", [PushEvent("team/app", D[0])])
    job = store.claim("w", 60, 3)
    ref, options = registry_reference(config, job)
    assert ref == f"registry:127.0.0.1:1/team/app@{D[0]}"
    assert options.insecure_registries == ()


class _Receiver(BaseHTTPRequestHandler):
    received: list = []
    status = 200

    def log_message(self, *a):
        pass

    def do_POST(self):
        body = self.rfile.read(int(self.headers["Content-Length"]))
        type(self).received.append((dict(self.headers), json.loads(body)))
        self.send_response(type(self).status)
        self.send_header("Content-Length", "0")
        self.end_headers()


def test_failing_verdicts_are_posted_to_the_notify_url(tmp_path):
    _Receiver.received = []
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Receiver)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{httpd.server_address[1]}/hook"
    config = load_config(
        write_config(
            str(tmp_path / "c.toml"),
            "127.0.0.1:1",
            database=str(tmp_path / "q.db"),
            extra_server='public_url = "https://imgcheck.example"',
            notify=f'[notify]\nurl = "{url}"\nheaders = {{X-Token = "t"}}\n',
        )
    )
    store = Store(config.database)
    try:
        store.enqueue("main", [PushEvent("a/b", D[0])])
        metrics = Metrics(store.counts)
        pool = WorkerPool(config, store, metrics, check=ok_results, notifier=Notifier(config.notify, config.public_url))
        pool.run(store.claim(pool.owner, 60, 3))
        assert _Receiver.received == []  # sent from the outbox, after the commit
        assert pool.drain_outbox() == 1
        assert len(_Receiver.received) == 1  # only the `fail` verdict (lab), not `ok` (prod)
        headers, body = _Receiver.received[0]
        assert body["verdict"] == "fail" and body["fleet"] == "lab" and body["digest"] == D[0]
        assert body["url"] == f"https://imgcheck.example/results/{D[0].replace(':', '%3A')}"
        assert "FAIL on fleet lab" in body["text"] and headers["X-Token"] == "t"
        # a receiver that is down or refuses does not fail the job, it is counted
        _Receiver.status = 500
        store.enqueue("main", [PushEvent("a/b", D[1])])
        pool.run(store.claim(pool.owner, 60, 3))
        assert pool.drain_outbox() == 0
        assert store.counts()["done"] == 2
        assert metrics.notify_errors._value.get() == 1
        # the refused notification stays in the outbox for a later attempt
        assert [(r["digest"], r["fleet"], r["attempts"]) for r in store.outbox_due(now=time.time() + 3600)] == [
            (D[1], "lab", 1)
        ]
    finally:
        _Receiver.status = 200
        httpd.shutdown()
        store.close()
