"""The ASGI app (Starlette, served by uvicorn): webhook intake, results, status page, metrics.

POST /webhook only authenticates, parses and durably enqueues; it answers 202 in milliseconds and
never checks an image itself (distribution and GitHub both time senders out and expect receivers
to queue). The checks run in the WorkerPool started by the app's lifespan.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import sqlite3
import threading
import time

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import ClientDisconnect, Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from ..model.env_redact import redact_report_dict
from .auth import authenticate, precheck, read_allowed
from .config import ServiceConfig
from .credentials import install_auth_file
from .events import MalformedPayload, is_digest, is_repository, parse_body
from .health import readiness_problems
from .metrics import CONTENT_TYPE, Metrics
from .notify import Notifier
from .pages import CSP, render_index, render_report, top_findings
from .storage import JobStore, open_store
from .store import StoreUnavailableError
from .worker import WorkerPool, check_job

log = logging.getLogger("imgcheck.service")


class BodyTooLarge(Exception):
    pass


class Service:
    """What the app needs at run time: the store, the workers, the metrics."""

    def __init__(self, config: ServiceConfig, check=check_job, start_workers: bool = True):
        self.config = config
        self.check = check
        self.start_workers = start_workers
        self.store: JobStore | None = None
        self.pool: WorkerPool | None = None
        self.metrics = Metrics(self._counts)

    def _counts(self) -> dict[str, int]:
        return self.store.counts() if self.store else {}

    def start(self) -> None:
        self.store = open_store(self.config.database, self.config.database_url, self.config.workers + 4)
        self.store.acquire_instance_lock()
        orphans = self.store.requeue_orphans()
        if orphans:
            log.info(
                "requeued %d job(s) left running by a previous process",
                orphans,
                extra={"event": "jobs.requeued", "count": orphans},
            )
        self.prune()
        install_auth_file(self.config)
        notifier = Notifier(self.config.notify, self.config.public_url) if self.config.notify else None
        self.pool = WorkerPool(
            self.config, self.store, self.metrics, check=self.check, notifier=notifier, prune=self.prune
        )
        if self.start_workers:
            self.pool.start()
            if any(r.watch for r in self.config.registries.values()):
                # in the background: a slow registry must not hold up accepting webhooks
                threading.Thread(target=self._reconcile, name="imgcheck-reconcile", daemon=True).start()

    def _reconcile(self) -> None:
        from .reconcile import reconcile

        try:
            if reconcile(self.config, self.store):
                self.pool.wake()
        except Exception:  # a bug here must not take the service down; pushes still arrive by webhook
            log.exception("reconcile failed", extra={"event": "reconcile.failed"})

    def prune(self) -> int:
        """Retention: delete finished jobs older than retention_days (at start, then hourly)."""
        if not self.config.retention_days or self.store is None:
            return 0
        removed = self.store.delete_finished_before(time.time() - self.config.retention_days * 86400)
        if removed:
            log.info(
                "deleted %d finished job(s) older than %g days",
                removed,
                self.config.retention_days,
                extra={"event": "retention.pruned", "count": removed},
            )
        return removed

    def stop(self) -> None:
        if self.pool:
            self.pool.stop()
        if self.store:
            self.store.close()


async def _read_capped(request: Request, limit: int) -> bytes:
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


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


def create_app(config: ServiceConfig, check=check_job, start_workers: bool = True) -> Starlette:
    service = Service(config, check=check, start_workers=start_workers)

    async def webhook(request: Request) -> Response:
        response = await _webhook(request)
        service.metrics.requests.labels(str(response.status_code)).inc()
        return response

    async def _webhook(request: Request) -> Response:
        name = request.path_params.get("registry")
        registry = config.registries.get(name) if name else config.default_registry()
        if registry is None:
            return _error(
                404,
                f"unknown registry {name!r}" if name else "several registries are configured: POST to /webhook/NAME",
            )
        first = precheck(registry, request.headers)
        if first == "no":  # before reading the body: strangers' uploads are never buffered
            return _error(401, "missing or wrong webhook secret or signature")
        try:
            body = await asyncio.wait_for(_read_capped(request, config.max_body_bytes), config.body_timeout_seconds)
        except BodyTooLarge:
            return _error(413, f"body larger than {config.max_body_bytes} bytes")
        except MalformedPayload as exc:
            return _error(400, str(exc))
        except TimeoutError:
            log.warning(
                "webhook body not complete after %.0f s; answered 408",
                config.body_timeout_seconds,
                extra={"event": "webhook.rejected", "status": 408, "registry": registry.name},
            )
            return _error(408, f"body not received within {config.body_timeout_seconds:g} s")
        except ClientDisconnect:  # the sender went away mid-body: nothing to answer, nothing queued
            log.warning(
                "webhook sender disconnected before the body was complete",
                extra={"event": "webhook.disconnected", "registry": registry.name},
            )
            return _error(400, "client disconnected")
        if first != "ok" and not authenticate(registry, request.headers, body):
            return _error(401, "missing or wrong webhook secret or signature")
        try:
            delivery = parse_body(
                body,
                github_event=request.headers.get("x-github-event"),
                github_delivery=request.headers.get("x-github-delivery"),
            )
        except MalformedPayload as exc:
            return _error(400, str(exc))
        if delivery.ping:  # GitHub checks a new hook with a ping and marks it failed unless 2xx
            return JSONResponse({"pong": True}, status_code=200)
        try:
            outcome = await run_in_threadpool(service.store.enqueue, registry.name, delivery.pushes)
        except (sqlite3.Error, StoreUnavailableError) as exc:  # the sender retries on 5xx; nothing was committed
            log.error("enqueue failed: %s", exc, extra={"event": "store.failed", "error": str(exc)})
            service.metrics.store_error("enqueue")
            return _error(503, "the job store is unavailable; retry")
        m = service.metrics.events
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
            service.pool.wake()
        return JSONResponse(
            {"queued": outcome.queued, "duplicates": outcome.duplicates, "ignored": delivery.ignored}, status_code=202
        )

    def guarded(handler):
        """Reads need the configured read token (reports name internal images and their settings)."""

        def wrapper(request: Request) -> Response:
            if not read_allowed(config.read_token, request.headers):
                return JSONResponse(
                    {"error": "a read token is required"},
                    status_code=401,
                    headers={"WWW-Authenticate": 'Basic realm="imgcheck", charset="UTF-8"'},
                )
            return handler(request)

        return wrapper

    def results(request: Request) -> Response:
        digest = request.path_params["digest"]
        if not is_digest(digest):
            return _error(400, "expected a digest like sha256:<64 hex digits>")
        fleet = request.query_params.get("fleet")
        repository = request.query_params.get("repository")
        jobs = [j for j in service.store.jobs_for_digest(digest) if not repository or j["repository"] == repository]
        if not jobs:
            return _error(404, f"no image with digest {digest} has been received")
        if fleet:
            # the bare CLI report, for tools that want exactly `imgcheck -o json` output
            if fleet not in config.fleets:
                from ..user_text import clip, did_you_mean

                return _error(404, f"unknown fleet {clip(fleet)!r}{did_you_mean(fleet, config.fleets)}")
            if len(jobs) > 1:
                return _error(409, "this digest is in several repositories; add ?repository=")
            row = next((r for r in service.store.results_for_job(jobs[0]["id"]) if r["fleet"] == fleet), None)
            if row is None:
                return JSONResponse({"state": jobs[0]["state"], "error": jobs[0]["last_error"]}, status_code=404)
            # redacted again on the way out: rows stored before redaction existed carry the whole Env
            return JSONResponse(redact_report_dict(json.loads(row["report"])))
        images = []
        for job in jobs:
            reports = {
                r["fleet"]: redact_report_dict(json.loads(r["report"]))
                for r in service.store.results_for_job(job["id"])
            }
            images.append({**_public(job), "reports": reports})
        return JSONResponse({"digest": digest, "images": images})

    def images(request: Request) -> Response:
        repository = request.path_params["repository"]
        if not is_repository(repository):
            return _error(400, "malformed repository name")
        history = service.store.history(repository)
        if not history:
            return _error(404, f"no pushes of {repository} have been received")
        return JSONResponse({"repository": repository, "history": [_public(j) for j in history]})

    def _reports(job_id: int) -> dict[str, dict]:
        out = {}
        for r in service.store.results_for_job(job_id):
            try:
                out[r["fleet"]] = redact_report_dict(json.loads(r["report"]))
            except ValueError:
                out[r["fleet"]] = {}
        return out

    def _html(page: str, status: int = 200) -> HTMLResponse:
        return HTMLResponse(
            page, status_code=status, headers={"Content-Security-Policy": CSP, "X-Content-Type-Options": "nosniff"}
        )

    def index(request: Request) -> Response:
        jobs = service.store.recent(50)
        findings = {j["id"]: top_findings(_reports(j["id"])) for j in jobs if j["verdicts"]}
        return _html(render_index(jobs, list(config.fleets), service.store.counts(), findings))

    def report_page(request: Request) -> Response:
        digest = request.path_params["digest"]
        if not is_digest(digest):
            return _error(400, "expected a digest like sha256:<64 hex digits>")
        repository = request.query_params.get("repository")
        jobs = [j for j in service.store.jobs_for_digest(digest) if not repository or j["repository"] == repository]
        if not jobs:
            return _error(404, f"no image with digest {digest} has been received")
        return _html(render_report(jobs, {j["id"]: _reports(j["id"]) for j in jobs}))

    def healthz(request: Request) -> Response:
        try:
            counts = service.store.counts()
        except (sqlite3.Error, StoreUnavailableError) as exc:
            service.metrics.store_error("read")
            return _error(503, f"database: {exc}")
        return JSONResponse({"status": "ok", "jobs": counts})

    def livez(request: Request) -> Response:
        # liveness: the event loop answers. Not the database: restarting pods does not fix it.
        return JSONResponse({"status": "ok"})

    def readyz(request: Request) -> Response:
        # readiness: take traffic only when an event can be stored (database, disk, node facts)
        problems = readiness_problems(config, service.store)
        if problems:
            return JSONResponse({"status": "not ready", "problems": problems}, status_code=503)
        return JSONResponse({"status": "ready"})

    def metrics(request: Request) -> Response:
        return Response(service.metrics.render(), media_type=CONTENT_TYPE)

    @contextlib.asynccontextmanager
    async def lifespan(app):
        await run_in_threadpool(service.start)
        try:
            yield
        finally:
            await run_in_threadpool(service.stop)

    app = Starlette(
        routes=[
            Route("/webhook", webhook, methods=["POST"]),
            Route("/webhook/{registry}", webhook, methods=["POST"]),
            Route("/results/{digest}", guarded(results), methods=["GET"]),
            Route("/images/{repository:path}", guarded(images), methods=["GET"]),
            Route("/", guarded(index), methods=["GET"]),
            Route("/report/{digest}", guarded(report_page), methods=["GET"]),
            Route("/healthz", healthz, methods=["GET"]),
            Route("/livez", livez, methods=["GET"]),
            Route("/readyz", readyz, methods=["GET"]),
            Route("/metrics", metrics, methods=["GET"]),
        ],
        lifespan=lifespan,
    )
    app.state.service = service
    return app


def server_options(config: ServiceConfig, log_level: str = "info") -> dict:
    """uvicorn settings: bounds on what clients can hold (connections, header time, the shutdown wait) and the log."""
    from .http_protocol import bounded_protocol
    from .logs import log_config

    return {
        "http": bounded_protocol(config.header_timeout_seconds),
        "limit_concurrency": config.max_connections,
        "log_config": log_config(config.log_format, log_level),
        "timeout_graceful_shutdown": config.shutdown_timeout_seconds,
        "timeout_keep_alive": 5,
    }


def _public(job: dict) -> dict:
    keys = (
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
    return {k: job[k] for k in keys}
