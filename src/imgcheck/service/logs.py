"""The service's log: one JSON object per line on stderr (or plain text), uvicorn's lines included.

Each line has `time` (UTC, ISO 8601), `level`, `logger` and `message`; service events add an
`event` name and fields such as `image`, `verdicts`, `seconds`, `attempt`, `error`, so a log
pipeline (Loki, Elasticsearch, `jq`) can select on them. Built on the standard logging module: the
formatter is small and the serve extra needs no logging library.
"""

from __future__ import annotations

import json
import logging
import time
from typing import Any

# the `extra=` keys the service passes; anything else on a record is logging's own bookkeeping
FIELDS = (
    "event",
    "registry",
    "image",
    "repository",
    "digest",
    "tags",
    "verdicts",
    "seconds",
    "attempt",
    "delay_seconds",
    "error",
    "status",
    "count",
    "queued",
    "duplicates",
    "ignored",
    "fleet",
    "kind",
)


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        out = {
            "time": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created)) + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        for key in FIELDS:
            if key in record.__dict__:
                out[key] = record.__dict__[key]
        if record.exc_info:
            out["exception"] = self.formatException(record.exc_info)
        return json.dumps(out, default=str, ensure_ascii=False)


TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


def log_config(fmt: str = "json", level: str = "info") -> dict[str, Any]:
    """A logging.dictConfig for uvicorn's `log_config`: uvicorn's loggers and imgcheck's, one handler.

    The root logger gets the same handler, so libraries' lines (psycopg_pool's reconnect warnings,
    psycopg's) are JSON too instead of reaching logging's plain-text last-resort handler.
    """
    formatter = {"()": JsonFormatter} if fmt == "json" else {"format": TEXT_FORMAT}
    logger = {"handlers": ["stderr"], "level": level.upper(), "propagate": False}
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {"main": formatter},
        "handlers": {"stderr": {"class": "logging.StreamHandler", "formatter": "main", "stream": "ext://sys.stderr"}},
        "loggers": {
            "uvicorn": logger,
            "uvicorn.error": {"level": level.upper()},
            "uvicorn.access": logger,
            "imgcheck": logger,
        },
        "root": {"handlers": ["stderr"], "level": "WARNING"},
    }
