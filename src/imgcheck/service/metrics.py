"""Prometheus metrics of the service (prometheus_client, one registry per app instance).

Counters start at zero with each process, as Prometheus expects; the queue depth is read from the
database at scrape time, so it is right across restarts.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

Counts = Callable[[], dict[str, int]]  # jobs by state, read from the store at scrape time

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


class _QueueCollector(Collector):
    def __init__(self, counts: Counts, on_error: Callable[[str], None]):
        self._counts, self._on_error = counts, on_error

    def collect(self) -> Iterator[Metric]:
        try:
            counts = self._counts()
        except Exception:  # the database is down: the scrape still answers, with the store error counted
            self._on_error("counts")
            return
        family = GaugeMetricFamily("imgcheck_queue_jobs", "Jobs in the queue by state", labels=["state"])
        for state, n in counts.items():
            family.add_metric([state], n)
        yield family
        depth = GaugeMetricFamily("imgcheck_queue_depth", "Jobs waiting or running (queued + running)")
        depth.add_metric([], counts.get("queued", 0) + counts.get("running", 0))
        yield depth


class Metrics:
    def __init__(self, counts: Counts):
        self.registry = CollectorRegistry(auto_describe=True)
        r = self.registry
        # first: a failed count at scrape time is then in the store-errors counter rendered after it
        r.register(_QueueCollector(counts, lambda operation: self.store_error(operation)))
        self.requests = Counter("imgcheck_webhook_requests", "Webhook requests by HTTP status", ["status"], registry=r)
        self.events = Counter(
            "imgcheck_events_received",
            "Registry events received, by outcome (queued, duplicate, ignored)",
            ["outcome"],
            registry=r,
        )
        self.checks = Counter(
            "imgcheck_checks", "Checks stored, by fleet and verdict", ["fleet", "verdict"], registry=r
        )
        self.failures_predicted = Counter(
            "imgcheck_failures_predicted", "Checks whose verdict is fail", ["fleet"], registry=r
        )
        self.job_errors = Counter(
            "imgcheck_job_errors",
            "Job attempts that did not finish, by outcome (retry, failed)",
            ["outcome"],
            registry=r,
        )
        self.notify_errors = Counter("imgcheck_notify_errors", "Failed notification POSTs", registry=r)
        self.store_errors = Counter(
            "imgcheck_store_errors",
            "Job store operations that failed (database unreachable or refusing), by operation",
            ["operation"],
            registry=r,
        )
        self.duration = Histogram(
            "imgcheck_check_duration_seconds",
            "Time to inspect an image and check it against every fleet",
            registry=r,
            buckets=(0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800),
        )

    def store_error(self, operation: str) -> None:
        self.store_errors.labels(operation).inc()

    def render(self) -> bytes:
        return generate_latest(self.registry)
