"""The service's route handlers: each is `handler(state, request) -> Response` over an AppState.

POST /webhook only authenticates, parses and durably enqueues; it answers 202 in milliseconds and
never checks an image itself (distribution and GitHub both time senders out and expect receivers
to queue). The checks run in the state's WorkerPool. create_app (app.py) binds these to routes.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
from collections.abc import Callable
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import ClientDisconnect, Request
from starlette.responses import HTMLResponse, JSONResponse, Response

from ..model.env_redact import redact_report_dict
from ..user_text import clip, did_you_mean
from .auth import authenticate, precheck, read_allowed
from .events import MalformedPayload, is_digest, is_repository, parse_body
from .health import readiness_problems
from .metrics import CONTENT_TYPE
from .pages import CSP, render_index, render_report, top_findings
from .state import AppState
from .store_dialect import Row
from .store_types import StoreUnavailableError

log = logging.getLogger("imgcheck.service")

Handler = Callable[[AppState, Request], Response]

BAD_DIGEST = "expected a digest like sha256:<64 hex digits>"


class BodyTooLarge(Exception):
    pass


def error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


# -- intake -------------------------------------------------------------------------------------


async def webhook(state: AppState, request: Request) -> Response:
    response = await _webhook(state, request)
    state.metrics.requests.labels(str(response.status_code)).inc()
    return response


async def _webhook(state: AppState, request: Request) -> Response:
    config = state.config
    name = request.path_params.get("registry")
    registry = config.registries.get(name) if name else config.default_registry()
    if registry is None:
        return error(
            404,
            f"unknown registry {name!r}" if name else "several registries are configured: POST to /webhook/NAME",
        )
    first = precheck(registry, request.headers)
    if first == "no":  # before reading the body: strangers' uploads are never buffered
        return error(401, "missing or wrong webhook secret or signature")
    try:
        body = await asyncio.wait_for(read_capped(request, config.max_body_bytes), config.body_timeout_seconds)
    except BodyTooLarge:
        return error(413, f"body larger than {config.max_body_bytes} bytes")
    except MalformedPayload as exc:
        return error(400, str(exc))
    except TimeoutError:
        log.warning(
            "webhook body not complete after %.0f s; answered 408",
            config.body_timeout_seconds,
            extra={"event": "webhook.rejected", "status": 408, "registry": registry.name},
        )
        return error(408, f"body not received within {config.body_timeout_seconds:g} s")
    except ClientDisconnect:  # the sender went away mid-body: nothing to answer, nothing queued
        log.warning(
            "webhook sender disconnected before the body was complete",
            extra={"event": "webhook.disconnected", "registry": registry.name},
        )
        return error(400, "client disconnected")
    if first != "ok" and not authenticate(registry, request.headers, body):
        return error(401, "missing or wrong webhook secret or signature")
    try:
        delivery = parse_body(
            body,
            github_event=request.headers.get("x-github-event"),
            github_delivery=request.headers.get("x-github-delivery"),
        )
    except MalformedPayload as exc:
        return error(400, str(exc))
    if delivery.ping:  # GitHub checks a new hook with a ping and marks it failed unless 2xx
        return JSONResponse({"pong": True}, status_code=200)
    try:
        outcome = await run_in_threadpool(lambda: state.store.enqueue(registry.name, delivery.pushes))
    except StoreUnavailableError as exc:  # the sender retries on 5xx; nothing was committed
        log.error("enqueue failed: %s", exc, extra={"event": "store.failed", "error": str(exc)})
        state.metrics.store_error("enqueue")
        return error(503, "the job store is unavailable; retry")
    m = state.metrics.events
    m.labels("queued").inc(outcome.queued)
    m.labels("duplicate").inc(outcome.duplicates)
    m.labels("ignored").inc(delivery.ignored)
    log.info(
        "webhook from %s: %d queued, %d duplicate(s), %d ignored",
        registry.name,
        outcome.queued,
        outcome.duplicates,
        delivery.ignored,
        extra={
            "event": "webhook.accepted",
            "registry": registry.name,
            "kind": delivery.kind,
            "queued": outcome.queued,
            "duplicates": outcome.duplicates,
            "ignored": delivery.ignored,
            "image": [f"{p.repository}@{p.digest}" for p in delivery.pushes],
        },
    )
    if outcome.queued:
        state.wake_workers()
    return JSONResponse(
        {"queued": outcome.queued, "duplicates": outcome.duplicates, "ignored": delivery.ignored}, status_code=202
    )


async def read_capped(request: Request, limit: int) -> bytes:
    declared = request.headers.get("content-length")
    if declared is not None:
        try:
            if int(declared) > limit:
                raise BodyTooLarge()
        except ValueError:
            raise MalformedPayload("bad Content-Length") from None
    chunks, total = [], 0
    async for chunk in request.stream():  # a chunked body has no Content-Length: count as it comes
        total += len(chunk)
        if total > limit:
            raise BodyTooLarge()
        chunks.append(chunk)
    return b"".join(chunks)


# -- reads (results, history, pages): the read token guards them ----------------------------------


def guarded(handler: Handler) -> Handler:
    """Reads need the configured read token (reports name internal images and their settings)."""

    @functools.wraps(handler)
    def wrapper(state: AppState, request: Request) -> Response:
        if not read_allowed(state.config.read_token, request.headers):
            return JSONResponse(
                {"error": "a read token is required"},
                status_code=401,
                headers={"WWW-Authenticate": 'Basic realm="imgcheck", charset="UTF-8"'},
            )
        return handler(state, request)

    return wrapper


@guarded
def results(state: AppState, request: Request) -> Response:
    digest = request.path_params["digest"]
    if not is_digest(digest):
        return error(400, BAD_DIGEST)
    fleet = request.query_params.get("fleet")
    jobs = _jobs(state, digest, request.query_params.get("repository"))
    if not jobs:
        return error(404, f"no image with digest {digest} has been received")
    if fleet:
        # the bare CLI report, for tools that want exactly `imgcheck -o json` output
        if fleet not in state.config.fleets:
            return error(404, f"unknown fleet {clip(fleet)!r}{did_you_mean(fleet, state.config.fleets)}")
        if len(jobs) > 1:
            return error(409, "this digest is in several repositories; add ?repository=")
        row = next((r for r in state.store.results_for_job(jobs[0]["id"]) if r["fleet"] == fleet), None)
        if row is None:
            return JSONResponse({"state": jobs[0]["state"], "error": jobs[0]["last_error"]}, status_code=404)
        # redacted again on the way out: rows stored before redaction existed carry the whole Env
        return JSONResponse(redact_report_dict(json.loads(row["report"])))
    images = []
    for job in jobs:
        reports = {
            r["fleet"]: redact_report_dict(json.loads(r["report"])) for r in state.store.results_for_job(job["id"])
        }
        images.append({**public(job), "reports": reports})
    return JSONResponse({"digest": digest, "images": images})


@guarded
def images(state: AppState, request: Request) -> Response:
    repository = request.path_params["repository"]
    if not is_repository(repository):
        return error(400, "malformed repository name")
    history = state.store.history(repository)
    if not history:
        return error(404, f"no pushes of {repository} have been received")
    return JSONResponse({"repository": repository, "history": [public(j) for j in history]})


@guarded
def index(state: AppState, request: Request) -> Response:
    jobs = state.store.recent(50)
    findings = {j["id"]: top_findings(_reports(state, j["id"])) for j in jobs if j["verdicts"]}
    return _html(render_index(jobs, list(state.config.fleets), state.store.counts(), findings))


@guarded
def report_page(state: AppState, request: Request) -> Response:
    digest = request.path_params["digest"]
    if not is_digest(digest):
        return error(400, BAD_DIGEST)
    jobs = _jobs(state, digest, request.query_params.get("repository"))
    if not jobs:
        return error(404, f"no image with digest {digest} has been received")
    return _html(render_report(jobs, {j["id"]: _reports(state, j["id"]) for j in jobs}))


def _jobs(state: AppState, digest: str, repository: str | None) -> list[Row]:
    return [j for j in state.store.jobs_for_digest(digest) if not repository or j["repository"] == repository]


def _reports(state: AppState, job_id: int) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for r in state.store.results_for_job(job_id):
        try:
            out[r["fleet"]] = redact_report_dict(json.loads(r["report"]))
        except ValueError:
            out[r["fleet"]] = {}
    return out


def _html(page: str, status: int = 200) -> HTMLResponse:
    return HTMLResponse(
        page, status_code=status, headers={"Content-Security-Policy": CSP, "X-Content-Type-Options": "nosniff"}
    )


PUBLIC_KEYS = (
    "registry",
    "repository",
    "digest",
    "tags",
    "state",
    "attempts",
    "last_error",
    "created_at",
    "finished_at",
    "verdicts",
)


def public(job: Row) -> dict[str, Any]:
    """A job summary as the JSON API shows it (no internal id)."""
    return {k: job[k] for k in PUBLIC_KEYS}


# -- probes and metrics (unguarded: kubelet and Prometheus carry no token) ------------------------


def healthz(state: AppState, request: Request) -> Response:
    try:
        counts = state.store.counts()
    except StoreUnavailableError as exc:
        state.metrics.store_error("read")
        return error(503, f"database: {exc}")
    return JSONResponse({"status": "ok", "jobs": counts})


def livez(state: AppState, request: Request) -> Response:
    # liveness: the event loop answers. Not the database: restarting pods does not fix it.
    return JSONResponse({"status": "ok"})


def readyz(state: AppState, request: Request) -> Response:
    # readiness: take traffic only when an event can be stored (database, disk, node facts)
    problems = readiness_problems(state.config, state.opened_store)
    if problems:
        return JSONResponse({"status": "not ready", "problems": problems}, status_code=503)
    return JSONResponse({"status": "ready"})


def metrics(state: AppState, request: Request) -> Response:
    return Response(state.metrics.render(), media_type=CONTENT_TYPE)
