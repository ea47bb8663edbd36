"""`imgcheck serve --config FILE`: the registry webhook service (see docs/webhook.md)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from ..errors import UsageError

if TYPE_CHECKING:
    from .common_args import Subparsers

NAMES = ("serve",)


def register(sub: Subparsers) -> None:
    p = sub.add_parser("serve", help="receive registry push webhooks and check every new image (docs/webhook.md)")
    p.add_argument("--config", required=True, metavar="FILE", help="service config (TOML)")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8080, help="port to listen on (default 8080)")
    p.add_argument("--log-level", default="info", choices=("debug", "info", "warning", "error"))
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if not 0 < args.port < 65536:
        raise UsageError(f"--port {args.port}: must be 1..65535")
    try:  # the web stack is an optional extra so the CLI and the probe image stay small
        import uvicorn

        from ..service.app import create_app, server_options
    except ImportError as exc:  # --debug shows which import failed, and from where (a broken install too)
        raise UsageError(
            f"imgcheck serve needs the 'serve' extra: pip install 'imgcheck[serve]' ({exc.name} is missing)"
        ) from exc
    from ..service.config import load_config
    from ..service.health import preflight
    from ..service.storage import open_store

    config = load_config(args.config)
    preflight(config)  # a mistyped node_facts path fails here, not at the first push
    # fail fast, with one line, if the database cannot be opened or is held by another process
    probe = open_store(config.database, config.database_url, pool_size=2)
    probe.acquire_instance_lock()
    probe.close()
    app = create_app(config)
    uvicorn.run(
        app,
        host=args.host,
        port=args.port,
        log_level=args.log_level,
        proxy_headers=False,
        server_header=False,
        lifespan="on",
        **server_options(config, args.log_level),
    )
    return 0
