"""Helpers for the `imgcheck serve` tests: configs, the service in a thread or a subprocess, DB peeks.

(Not a conftest.py: several test directories have one and `from conftest import` would pick
whichever was imported last. Test modules import the `imgcheck_home` fixture from here.)
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time

import pytest
import requests
from registryfixture import REGISTRY_BIN, RegistryServer, free_port  # noqa: F401  (tests/ is on sys.path)

HERE = os.path.dirname(os.path.abspath(__file__))
NODES = os.path.join(HERE, "nodes")
SECRET = "webhook-s3cret"
ENVELOPE = "application/vnd.docker.distribution.events.v2+json"


def write_config(
    path: str,
    registry_host: str,
    *,
    database: str,
    workers: int = 2,
    extra_server: str = "",
    registry_extra: str = "",
    notify: str = "",
) -> str:
    """A service config with two fleets: `lab` (a node whose memlock limit fails) and `prod` (MOFED 5.8)."""
    with open(path, "w") as fh:
        fh.write(f"""
[server]
database = "{database}"
workers = {workers}
max_body_bytes = 65536
backoff_seconds = 0.2
poll_seconds = 0.2
{extra_server}

[registries.main]
host = "{registry_host}"
secret = "{SECRET}"
{registry_extra}

[fleets.lab]
node_facts = ["{NODES}/lab-memlock.json"]

[fleets.prod]
node_facts = ["{NODES}/prod-mofed.json"]
{notify}
""")
    return path


def envelope(
    repository: str,
    digest: str,
    tag: str | None = "latest",
    event_id: str | None = None,
    action: str = "push",
    media_type: str = "application/vnd.oci.image.manifest.v1+json",
) -> bytes:
    """A CNCF distribution notification envelope as docker-registry sends it."""
    event = {
        "id": event_id or f"evt-{digest[7:19]}-{tag}",
        "timestamp": "2026-12-02T10:00:00Z",
        "action": action,
        "target": {
            "mediaType": media_type,
            "digest": digest,
            "size": 1234,
            "repository": repository,
            "url": f"http://evil.example/v2/{repository}/manifests/{digest}",
            "tag": tag,
        },
        "request": {
            "id": "r1",
            "addr": "127.0.0.1:5555",
            "host": "registry.invalid",
            "method": "PUT",
            "useragent": "test",
        },
        "actor": {},
        "source": {"addr": "registry:5000", "instanceID": "x"},
    }
    return json.dumps({"events": [event]}).encode()


def post_event(base: str, body: bytes, secret: str | None = SECRET, path: str = "/webhook", **headers):
    h = {"Content-Type": ENVELOPE, **headers}
    if secret is not None:
        h["Authorization"] = f"Bearer {secret}"
    return requests.post(base + path, data=body, headers=h, timeout=10)


def db_rows(database: str, sql: str, args=()) -> list[tuple]:
    """Read the service's SQLite database directly (a second reader is fine with WAL)."""
    conn = sqlite3.connect(f"file:{database}?mode=ro", uri=True, timeout=10)
    try:
        return conn.execute(sql, args).fetchall()
    finally:
        conn.close()


def wait_for(predicate, timeout: float, what: str, interval: float = 0.1):
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(interval)


class ThreadedService:
    """The real app served by uvicorn on 127.0.0.1 in a background thread."""

    def __init__(self, config_path: str, check=None, start_workers: bool = True, port: int | None = None):
        import uvicorn

        from imgcheck.service.app import create_app, server_options
        from imgcheck.service.config import load_config
        from imgcheck.service.worker import check_job

        self.config = load_config(config_path)
        self.app = create_app(self.config, check=check or check_job, start_workers=start_workers)
        self.port = port or free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        options = server_options(self.config)
        del options["log_config"]  # in-process: leave pytest's logging set-up alone
        self.server = uvicorn.Server(
            uvicorn.Config(self.app, host="127.0.0.1", port=self.port, log_level="warning", lifespan="on", **options)
        )
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.thread.start()
        wait_for(lambda: self.server.started or not self.thread.is_alive(), 20, "uvicorn to start", 0.02)
        assert self.server.started, "the service did not start"

    @property
    def service(self):
        return self.app.state.service

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(15)


class ServiceProcess:
    """`imgcheck serve` as a real subprocess (for SIGKILL)."""

    def __init__(
        self,
        config_path: str,
        workdir: str,
        env: dict | None = None,
        log_level: str = "warning",
        port: int | None = None,
    ):
        self.port = port or free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.log_path = os.path.join(workdir, f"serve-{self.port}.log")
        self.log = open(self.log_path, "wb")
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "imgcheck.cli.main",
                "serve",
                "--config",
                config_path,
                "--port",
                str(self.port),
                "--log-level",
                log_level,
            ],
            stdout=self.log,
            stderr=subprocess.STDOUT,
            env={**os.environ, **(env or {})},
        )
        try:
            wait_for(self._up, 30, "imgcheck serve to answer /healthz", 0.05)
        except AssertionError as exc:
            self.kill()
            raise AssertionError("imgcheck serve did not start:\n" + self.output()) from exc

    def _up(self) -> bool:
        if self.proc.poll() is not None:
            raise AssertionError("imgcheck serve exited:\n" + self.output())
        try:
            return requests.get(self.base + "/healthz", timeout=1).status_code == 200
        except requests.ConnectionError:
            return False

    def output(self) -> str:
        if not self.log.closed:
            self.log.flush()
        with open(self.log_path, errors="replace") as fh:
            return fh.read()

    def kill(self) -> None:
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGKILL)
            self.proc.wait(10)
        self.log.close()

    def terminate(self) -> int:
        if self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(20)
        self.log.close()
        return self.proc.returncode


@pytest.fixture
def imgcheck_home(tmp_path, monkeypatch):
    """A private $IMGCHECK_HOME (layer cache, inventory) for the service under test."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("IMGCHECK_HOME", str(home))
    # the service points REGISTRY_AUTH_FILE at its own file; restore the variable afterwards
    monkeypatch.setenv("REGISTRY_AUTH_FILE", "")
    monkeypatch.delenv("REGISTRY_AUTH_FILE")
    return str(home)


def need_registry() -> None:
    if not os.path.exists(REGISTRY_BIN):
        pytest.skip("Debian's docker-registry is not installed (apt-get install docker-registry)")


def notifications_yaml(url: str, secret: str = SECRET) -> str:
    """distribution's `notifications:` block sending every event to the service.

    No `ignoredmediatypes` filter here on purpose: the registry then also sends blob pushes and
    pulls, and the service must ignore them itself. (docker-registry 2.8 does not know the newer
    `ignore: {actions: ...}` key and silently sends pulls anyway; docs/webhook.md says so.)
    """
    return f"""notifications:
  endpoints:
    - name: imgcheck
      url: {url}
      headers:
        Authorization: [Bearer {secret}]
      timeout: 5s
      threshold: 3
      backoff: 1s
"""
