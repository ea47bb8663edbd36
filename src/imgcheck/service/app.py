"""The ASGI app (Starlette, served by uvicorn): webhook intake, results, status page, metrics.

create_app only wires: one AppState (state.py: config, job store, workers, metrics) and the routes to
the handlers (handlers.py), each bound to that state; the lifespan starts and stops the state.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from functools import partial
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.routing import Route

from . import handlers
from .config import ServiceConfig
from .state import AppState, CheckFn
from .worker import check_job


def create_app(config: ServiceConfig, check: CheckFn = check_job, start_workers: bool = True) -> Starlette:
    state = AppState(config, check=check, start_workers=start_workers)

    def get(path: str, handler: handlers.Handler) -> Route:
        return Route(path, partial(handler, state), methods=["GET"])

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        await run_in_threadpool(state.start)
        try:
            yield
        finally:
            await run_in_threadpool(state.stop)

    app = Starlette(
        routes=[
            Route("/webhook", partial(handlers.webhook, state), methods=["POST"]),
            Route("/webhook/{registry}", partial(handlers.webhook, state), methods=["POST"]),
            get("/results/{digest}", handlers.results),
            get("/images/{repository:path}", handlers.images),
            get("/", handlers.index),
            get("/report/{digest}", handlers.report_page),
            get("/healthz", handlers.healthz),
            get("/livez", handlers.livez),
            get("/readyz", handlers.readyz),
            get("/metrics", handlers.metrics),
        ],
        lifespan=lifespan,
    )
    app.state.service = state
    return app


def server_options(config: ServiceConfig, log_level: str = "info") -> dict[str, Any]:
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
