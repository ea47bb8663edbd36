"""Best-effort notification of verdicts (by default only `fail`) to a configured URL.

The JSON body carries a `text` line, which Slack, Mattermost and Rocket.Chat incoming webhooks
display as is, plus structured fields for other receivers. A failed POST is logged and counted,
never retried and never allowed to fail the job: the result is already stored.
"""

from __future__ import annotations

import json
import logging
from typing import Any
from urllib.parse import quote

import requests

from .config import NotifyConfig
from .store_types import FleetResult, Job

log = logging.getLogger("imgcheck.service")


def message(job: Job, result: FleetResult, public_url: str | None) -> dict[str, Any]:
    try:
        report = json.loads(result.report_json)
    except ValueError:
        report = {}
    findings = [f for f in report.get("findings", []) if isinstance(f, dict)]
    # a conditional finding (schema 5 "assumes") is a hypothesis about the image, not a failure to announce
    worst = [
        f"{f.get('id')}: {f.get('title')}" for f in findings if f.get("severity") == "error" and not f.get("assumes")
    ]
    worst = worst[:5]
    link = f"{public_url.rstrip('/')}/results/{quote(job.digest)}" if public_url else None
    text = f"imgcheck: {job.repository}@{job.digest[:19]} is {result.verdict.upper()} on fleet {result.fleet}"
    if worst:
        text += " (" + "; ".join(worst) + ")"
    if link:
        text += f" {link}"
    return {
        "text": text,
        "registry": job.registry,
        "repository": job.repository,
        "digest": job.digest,
        "fleet": result.fleet,
        "verdict": result.verdict,
        "findings": [f.get("id") for f in findings],
        "url": link,
    }


class Notifier:
    def __init__(self, config: NotifyConfig, public_url: str | None = None, session: requests.Session | None = None):
        self.config, self.public_url = config, public_url
        self.session = session or requests.Session()

    def send(self, job: Job, result: FleetResult) -> bool:
        """True when nothing had to be sent or the receiver accepted it."""
        if result.verdict not in self.config.verdicts:
            return True
        try:
            resp = self.session.post(
                self.config.url,
                json=message(job, result, self.public_url),
                headers=self.config.headers,
                timeout=self.config.timeout,
            )
            resp.close()
            if resp.status_code >= 300:
                log.warning(
                    "notification for %s was refused: HTTP %d",
                    job.digest,
                    resp.status_code,
                    extra={
                        "event": "notify.failed",
                        "image": f"{job.repository}@{job.digest}",
                        "status": resp.status_code,
                    },
                )
                return False
            return True
        except requests.RequestException as exc:
            log.warning(
                "notification for %s failed: %s",
                job.digest,
                exc.__class__.__name__,
                extra={
                    "event": "notify.failed",
                    "image": f"{job.repository}@{job.digest}",
                    "error": exc.__class__.__name__,
                },
            )
            return False
