"""The ASGI app (Starlette, served by uvicorn): webhook intake, results, status page, metrics.

POST /webhook only authenticates, parses and durably enqueues; it answers 202 in milliseconds and
never checks an image itself (distribution and GitHub both time senders out and expect receivers
to queue). The checks run in the WorkerPool started by the app's lifespan.
"""

from __future__ import annotations

import contextlib
import json
import logging
import sqlite3

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from .auth import authenticate
from .config import ServiceConfig
from .credentials import install_auth_file
from .events import MalformedPayload, is_digest, is_repository, parse_body
from .metrics import CONTENT_TYPE, Metrics
from .notify import Notifier
from .pages import CSP, render_index
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
            log.info("requeued %d job(s) left running by a previous process", orphans)
        install_auth_file(self.config)
        notifier = Notifier(self.config.notify, self.config.public_url) if self.config.notify else None
        self.pool = WorkerPool(self.config, self.store, self.metrics, check=self.check, notifier=notifier)
        if self.start_workers:
            self.pool.start()

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
            return _error(404, f"unknown registry {name!r}" if name else
                          "several registries are configured: POST to /webhook/NAME")
        try:
            body = await _read_capped(request, config.max_body_bytes)
        except BodyTooLarge:
            return _error(413, f"body larger than {config.max_body_bytes} bytes")
        except MalformedPayload as exc:
            return _error(400, str(exc))
        if not authenticate(registry, request.headers, body):
            return _error(401, "missing or wrong webhook secret or signature")
        try:
            delivery = parse_body(body)
        except MalformedPayload as exc:
            return _error(400, str(exc))
        try:
            outcome = await run_in_threadpool(service.store.enqueue, registry.name, delivery.pushes)
        except (sqlite3.Error, StoreUnavailableError) as exc:  # the sender retries on 5xx; nothing was committed
            log.error("enqueue failed: %s", exc)
            return _error(503, "the job store is unavailable; retry")
        m = service.metrics.events
        m.labels("queued").inc(outcome.queued)
        m.labels("duplicate").inc(outcome.duplicates)
        m.labels("ignored").inc(delivery.ignored)
        if outcome.queued:
            service.pool.wake()
        return JSONResponse({"queued": outcome.queued, "duplicates": outcome.duplicates,
                             "ignored": delivery.ignored}, status_code=202)

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
                return _error(404, f"unknown fleet {fleet!r}")
            if len(jobs) > 1:
                return _error(409, "this digest is in several repositories; add ?repository=")
            row = next((r for r in service.store.results_for_job(jobs[0]["id"]) if r["fleet"] == fleet), None)
            if row is None:
                return JSONResponse({"state": jobs[0]["state"], "error": jobs[0]["last_error"]}, status_code=404)
            return Response(row["report"], media_type="application/json")
        images = []
        for job in jobs:
            reports = {r["fleet"]: json.loads(r["report"]) for r in service.store.results_for_job(job["id"])}
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

    def index(request: Request) -> Response:
        page = render_index(service.store.recent(50), list(config.fleets), service.store.counts())
        return HTMLResponse(page, headers={"Content-Security-Policy": CSP, "X-Content-Type-Options": "nosniff"})

    def healthz(request: Request) -> Response:
        try:
            counts = service.store.counts()
        except (sqlite3.Error, StoreUnavailableError) as exc:
            return _error(503, f"database: {exc}")
        return JSONResponse({"status": "ok", "jobs": counts})

    def livez(request: Request) -> Response:
        # liveness: the event loop answers. Not the database: restarting pods does not fix it.
        return JSONResponse({"status": "ok"})

    def readyz(request: Request) -> Response:
        # readiness: take traffic only when an event can be stored and a layer can be cached
        from .readiness import check_ready

        problems = check_ready(service.store)
        if problems:
            return JSONResponse({"status": "unready", "problems": problems}, status_code=503)
        return JSONResponse({"status": "ok"})

    def metrics(request: Request) -> Response:
        return Response(service.metrics.render(), media_type=CONTENT_TYPE)

    @contextlib.asynccontextmanager
    async def lifespan(app):
        await run_in_threadpool(service.start)
        try:
            yield
        finally:
            await run_in_threadpool(service.stop)

    app = Starlette(routes=[
        Route("/webhook", webhook, methods=["POST"]),
        Route("/webhook/{registry}", webhook, methods=["POST"]),
        Route("/results/{digest}", results, methods=["GET"]),
        Route("/images/{repository:path}", images, methods=["GET"]),
        Route("/", index, methods=["GET"]),
        Route("/healthz", healthz, methods=["GET"]),
        Route("/livez", livez, methods=["GET"]),
        Route("/readyz", readyz, methods=["GET"]),
        Route("/metrics", metrics, methods=["GET"]),
    ], lifespan=lifespan)
    app.state.service = service
    return app


def _public(job: dict) -> dict:
    keys = ("registry", "repository", "digest", "tags", "state", "attempts", "last_error", "created_at",
            "finished_at", "verdicts")
    return {k: job[k] for k in keys}
