"""The route handlers called alone (no server, no workers): each error path answers its status and one
clear message, over a real SQLite job store. The routes end to end are test_serve_app.py."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import sqlite3

import pytest
from servicekit import ENVELOPE, SECRET, envelope, write_config
from starlette.requests import Request

from imgcheck.service import handlers
from imgcheck.service.config import load_config
from imgcheck.service.events import PushEvent
from imgcheck.service.state import AppState
from imgcheck.service.store import FleetResult, Store

D1 = "sha256:" + "1" * 64
D2 = "sha256:" + "2" * 64


@pytest.fixture
def config(tmp_path):
    return load_config(write_config(str(tmp_path / "c.toml"), "127.0.0.1:1", database=str(tmp_path / "q.db")))


@pytest.fixture
def state(config):
    store = Store(config.database)
    yield AppState(config, start_workers=False, store=store)
    store.close()


def get(path: str, path_params: dict | None = None, query: str = "", headers: dict | None = None) -> Request:
    return Request(
        {
            "type": "http",
            "method": "GET",
            "path": path,
            "path_params": path_params or {},
            "query_string": query.encode(),
            "headers": [(k.lower().encode(), v.encode()) for k, v in (headers or {}).items()],
        }
    )


def post(path: str, body: bytes, headers: dict, registry: str | None = None, stall: float = 0.0) -> Request:
    """A POST whose body arrives in one piece (after `stall` seconds); an empty body: the client went away."""
    sent = False

    async def receive():
        nonlocal sent
        if sent or not body:
            return {"type": "http.disconnect"}
        await asyncio.sleep(stall)
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    return Request(
        {
            "type": "http",
            "method": "POST",
            "path": path,
            "path_params": {"registry": registry} if registry else {},
            "query_string": b"",
            "headers": [(k.lower().encode(), v.encode()) for k, v in headers.items()],
        },
        receive,
    )


def answer(response) -> tuple[int, dict]:
    return response.status_code, json.loads(response.body)


def webhook(state, request) -> tuple[int, dict]:
    return answer(asyncio.run(handlers.webhook(state, request)))


AUTH = {"Content-Type": ENVELOPE, "Authorization": f"Bearer {SECRET}"}


def test_results_error_paths(state):
    assert answer(handlers.results(state, get("/results/x", {"digest": "sha256:abc"}))) == (
        400,
        {"error": handlers.BAD_DIGEST},
    )
    status, body = answer(handlers.results(state, get("/results/" + D1, {"digest": D1})))
    assert status == 404 and "has been received" in body["error"]
    state.store.enqueue("main", [PushEvent("a/b", D1), PushEvent("c/d", D1)])
    status, body = answer(handlers.results(state, get("/results/" + D1, {"digest": D1}, "fleet=labb")))
    assert status == 404 and "unknown fleet 'labb'" in body["error"] and "lab" in body["error"]
    status, body = answer(handlers.results(state, get("/results/" + D1, {"digest": D1}, "fleet=lab")))
    assert status == 409 and "?repository=" in body["error"]
    status, body = answer(handlers.results(state, get("/results/" + D1, {"digest": D1}, "fleet=lab&repository=a/b")))
    assert (status, body) == (404, {"state": "queued", "error": None})  # not checked yet


def test_results_and_pages_need_the_read_token_when_one_is_set(state):
    state.config = dataclasses.replace(state.config, read_token="tok")
    for handler, params in (
        (handlers.results, {"digest": D1}),
        (handlers.images, {"repository": "a/b"}),
        (handlers.index, {}),
        (handlers.report_page, {"digest": D1}),
    ):
        response = handler(state, get("/", params))
        assert response.status_code == 401 and "Basic" in response.headers["www-authenticate"]
    assert handlers.index(state, get("/", headers={"Authorization": "Bearer tok"})).status_code == 200


def test_a_stored_report_is_served_redacted(state):
    state.store.enqueue("main", [PushEvent("a/b", D1, "v1")])
    job = state.store.claim("w", 60, 3)
    report = {"verdict": "fail", "image": {"env": {"HF_TOKEN": "hf_secret", "PATH": "/usr/bin"}}}
    assert state.store.complete(job, "w", [FleetResult("lab", "fail", json.dumps(report))])
    response = handlers.results(state, get("/results/" + D1, {"digest": D1}, "fleet=lab"))
    assert response.status_code == 200 and b"hf_secret" not in response.body
    status, body = answer(handlers.results(state, get("/results/" + D1, {"digest": D1})))
    assert status == 200 and body["images"][0]["tags"] == ["v1"] and "id" not in body["images"][0]


def test_images_and_report_page_error_paths(state):
    assert handlers.images(state, get("/images/x", {"repository": "UPPER/case"})).status_code == 400
    status, body = answer(handlers.images(state, get("/images/a/b", {"repository": "a/b"})))
    assert status == 404 and "a/b" in body["error"]
    assert handlers.report_page(state, get("/report/x", {"digest": "nope"})).status_code == 400
    assert handlers.report_page(state, get("/report/" + D1, {"digest": D1})).status_code == 404


def test_probes_before_the_store_is_open(config):
    state = AppState(config, start_workers=False)  # the lifespan has not run start()
    status, body = answer(handlers.healthz(state, get("/healthz")))
    assert status == 503 and "not open" in body["error"]
    status, body = answer(handlers.readyz(state, get("/readyz")))
    assert status == 503 and any("not open" in p for p in body["problems"])
    assert handlers.livez(state, get("/livez")).status_code == 200  # liveness never asks the database
    assert b"imgcheck_store_errors" in handlers.metrics(state, get("/metrics")).body


def test_webhook_error_paths(state):
    body = envelope("team/app", D1)
    status, answer_ = webhook(state, post("/webhook/nope", body, AUTH, registry="nope"))
    assert status == 404 and "unknown registry 'nope'" in answer_["error"]
    assert webhook(state, post("/webhook", body, {"Content-Type": ENVELOPE}))[0] == 401
    assert webhook(state, post("/webhook", body, {**AUTH, "Authorization": "Bearer wrong"}))[0] == 401
    big = b"x" * (state.config.max_body_bytes + 1)
    assert webhook(state, post("/webhook", big, AUTH))[0] == 413
    assert webhook(state, post("/webhook", body, {**AUTH, "Content-Length": "many"}))[0] == 400
    assert webhook(state, post("/webhook", b"{not json", AUTH))[0] == 400
    assert state.store.counts()["queued"] == 0
    assert webhook(state, post("/webhook", body, AUTH)) == (202, {"queued": 1, "duplicates": 0, "ignored": 0})


def test_webhook_slow_or_vanished_bodies_and_a_github_ping_queue_nothing(state):
    state.config = dataclasses.replace(state.config, body_timeout_seconds=0.1)
    status, body = webhook(state, post("/webhook", envelope("team/app", D1), AUTH, stall=1.0))
    assert status == 408 and "0.1 s" in body["error"]
    assert webhook(state, post("/webhook", b"", AUTH)) == (400, {"error": "client disconnected"})
    ping = {**AUTH, "Content-Type": "application/json", "X-GitHub-Event": "ping", "X-GitHub-Delivery": "d-1"}
    assert webhook(state, post("/webhook", b'{"zen": "Design for failure."}', ping)) == (200, {"pong": True})
    assert state.store.counts()["queued"] == 0
    assert b'imgcheck_webhook_requests_total{status="408"} 1.0' in state.metrics.render()


def test_webhook_answers_503_when_the_store_is_locked_and_nothing_is_queued(config):
    """A database another writer holds past the busy timeout: 503, so the sender retries later."""
    store = Store(config.database, busy_timeout=0.1)
    state = AppState(config, start_workers=False, store=store)
    holder = sqlite3.connect(config.database, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        status, body = webhook(state, post("/webhook", envelope("team/app", D1), AUTH))
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert (status, body) == (503, {"error": "the job store is unavailable; retry"})
    assert b'imgcheck_store_errors_total{operation="enqueue"} 1.0' in state.metrics.render()
    assert store.counts()["queued"] == 0
    store.close()
