"""A misbehaving HTTP front for the real registry: each fault ends in the right result or error.

The proxy forwards to Debian's docker-registry and injects, once per scripted fault: an HTTP
status (429 with Retry-After, 500, 503), a connection dropped mid-body, bytes that do not match
the digest, or a server that ignores Range. Sleeps are recorded instead of slept.
"""

from __future__ import annotations

import os
import re
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import requests
from imagebuild import build_oci, make_layer
from registryfixture import free_port
from registrypush import Pusher

from imgcheck import api
from imgcheck.cli.main import main
from imgcheck.errors import BadInputError, UnavailableError
from imgcheck.extractors.assemble import build_facts, want_set
from imgcheck.sources.http import HttpPolicy
from imgcheck.sources.reference import parse_reference
from imgcheck.sources.registry import RegistrySource
from imgcheck.view.reader import read_view

pytestmark = pytest.mark.registry

PAYLOAD = os.urandom(512 * 1024)  # incompressible, so the layer blob is large enough to cut in half


class FaultProxy:
    def __init__(self, upstream: str):
        self.upstream = upstream
        self.faults: list[dict] = []
        self.log: list[dict] = []
        self.lock = threading.Lock()
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_HEAD(self):
                proxy.handle(self, "HEAD")

            def do_GET(self):
                proxy.handle(self, "GET")

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.host = f"127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def add(self, method: str, pattern: str, kind: str, times: int = 1, **kw) -> None:
        for _ in range(times):
            self.faults.append({"method": method, "pattern": pattern, "kind": kind, **kw})

    def _take(self, method: str, path: str) -> dict | None:
        with self.lock:
            for i, f in enumerate(self.faults):
                if f["method"] == method and re.search(f["pattern"], path):
                    return self.faults.pop(i)
        return None

    def handle(self, h: BaseHTTPRequestHandler, method: str) -> None:
        fault = self._take(method, h.path)
        self.log.append(
            {"method": method, "path": h.path, "range": h.headers.get("Range"), "fault": fault and fault["kind"]}
        )
        if fault and fault["kind"] == "status":
            body = b'{"errors":[{"code":"TOOMANYREQUESTS","message":"slow down"}]}'
            h.send_response(fault["code"])
            for k, v in fault.get("headers", {}).items():
                h.send_header(k, v)
            h.send_header("Content-Length", str(len(body)))
            h.end_headers()
            if method != "HEAD":
                h.wfile.write(body)
            return
        headers = {k: v for k, v in h.headers.items() if k.lower() in ("accept", "authorization", "range")}
        if fault and fault["kind"] == "no_digest_header":
            up_headers_drop = {"docker-content-digest"}
        else:
            up_headers_drop = set()
        if fault and fault["kind"] == "ignore_range":
            headers.pop("Range", None)
        up = requests.request(method, self.upstream + h.path, headers=headers, allow_redirects=False, timeout=30)
        body = up.content
        if fault and fault["kind"] == "corrupt":
            mid = len(body) // 2
            body = body[:mid] + bytes([body[mid] ^ 0xFF]) + body[mid + 1 :]
        h.send_response(up.status_code)
        for k, v in up.headers.items():
            if (
                k.lower()
                in (
                    "content-type",
                    "docker-content-digest",
                    "content-range",
                    "www-authenticate",
                    "accept-ranges",
                    "location",
                )
                and k.lower() not in up_headers_drop
            ):
                h.send_header(k, v)
        h.send_header(
            "Content-Length", up.headers.get("Content-Length", str(len(body))) if method == "HEAD" else str(len(body))
        )
        h.end_headers()
        if method == "HEAD":
            return
        if fault and fault["kind"] == "drop":
            cut = fault.get("at", len(body) // 2)
            h.wfile.write(body[:cut])
            h.wfile.flush()
            h.close_connection = True
            h.connection.shutdown(socket.SHUT_RDWR)  # the peer sees the body end early
            return
        h.wfile.write(body)

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture(scope="module")
def pushed(registry):
    img = build_oci(
        [make_layer({"etc/os-release": b'ID=debian\nVERSION_ID="12"\n', "opt/payload.bin": PAYLOAD})],
        compression="gzip",
    )
    Pusher(registry.url).push_image("faults/img", "v1", img)
    layer_digest = [d for d in img.blobs if img.blobs[d] != img.config][0]
    return img, layer_digest


@pytest.fixture
def proxy(registry):
    p = FaultProxy(registry.url)
    yield p
    p.stop()


def inspect(proxy, sleeps: list[float], **kw):
    src = RegistrySource(parse_reference(f"{proxy.host}/faults/img:v1"), sleep=sleeps.append, **kw)
    try:
        image = src.open()
        view, _ = read_view(image, want_set())
        return build_facts(view, image, "x")
    finally:
        src.close()


def test_clean_pass_through(proxy, pushed):
    sleeps: list[float] = []
    facts = inspect(proxy, sleeps)
    assert facts.digest == pushed[0].manifest_digest and facts.os.version_id == "12"
    assert sleeps == []


def test_429_retry_after_is_honoured(proxy, pushed):
    img, layer = pushed
    proxy.add("HEAD", r"/manifests/v1$", "status", code=429, headers={"Retry-After": "2"})
    proxy.add("GET", f"/blobs/{layer}", "status", code=429, headers={"Retry-After": "1"})
    sleeps: list[float] = []
    facts = inspect(proxy, sleeps)
    assert facts.digest == img.manifest_digest and facts.os.version_id == "12"
    assert sleeps == [2.0, 1.0]  # the server's wait, not our own backoff


def test_5xx_backoff_then_success(proxy, pushed):
    img, layer = pushed
    proxy.add("GET", f"/blobs/{layer}", "status", code=500, times=2)
    proxy.add("GET", r"/manifests/sha256:", "status", code=503)
    sleeps: list[float] = []
    facts = inspect(proxy, sleeps)
    assert facts.digest == img.manifest_digest and facts.os.version_id == "12"
    assert sleeps == [0.5, 0.5, 1.0]  # exponential per request: manifest once, blob twice


def test_persistent_5xx_is_unavailable(proxy, pushed):
    _, layer = pushed
    proxy.add("GET", f"/blobs/{layer}", "status", code=503, times=10)
    sleeps: list[float] = []
    with pytest.raises(UnavailableError, match="server error HTTP 503.*after 5 attempts"):
        inspect(proxy, sleeps)
    assert len(sleeps) == 4


def test_long_retry_after_fails_at_once(proxy, pushed):
    proxy.add("HEAD", r"/manifests/v1$", "status", code=429, headers={"Retry-After": "3600"})
    proxy.add("GET", r"/manifests/v1$", "status", code=429, headers={"Retry-After": "3600"})
    sleeps: list[float] = []
    with pytest.raises(UnavailableError, match="rate limited.*retry after 3600 s"):
        inspect(proxy, sleeps)
    assert sleeps == []


def test_head_without_digest_falls_back_to_get_by_tag(proxy, pushed):
    img, _ = pushed
    proxy.add("HEAD", r"/manifests/v1$", "no_digest_header")
    proxy.add("GET", r"/manifests/v1$", "no_digest_header")
    facts = inspect(proxy, [])
    assert facts.digest == img.manifest_digest  # computed from the bytes themselves
    assert [(e["method"], e["path"].rsplit("/", 1)[1]) for e in proxy.log if "/manifests/" in e["path"]] == [
        ("HEAD", "v1"),
        ("GET", "v1"),
    ]


def test_dropped_blob_resumes_with_range(proxy, pushed):
    img, layer = pushed
    size = len(img.blobs[layer])
    cut = size // 3
    proxy.add("GET", f"/blobs/{layer}", "drop", at=cut)
    proxy.add("GET", f"/blobs/{layer}", "drop", at=cut)  # the resumed request drops too
    sleeps: list[float] = []
    facts = inspect(proxy, sleeps)
    assert facts.digest == img.manifest_digest and facts.os.version_id == "12"
    ranges = [e["range"] for e in proxy.log if layer in e["path"]]
    assert ranges[0] is None and ranges[1] == f"bytes={cut}-" and ranges[2] == f"bytes={2 * cut}-"


def test_resume_against_a_server_ignoring_range(proxy, pushed):
    img, layer = pushed
    proxy.add("GET", f"/blobs/{layer}", "drop", at=1000)
    proxy.add("GET", f"/blobs/{layer}", "ignore_range")
    facts = inspect(proxy, [])
    assert facts.digest == img.manifest_digest and facts.os.version_id == "12"


def test_drop_on_small_documents_is_retried(proxy, pushed):
    img, _ = pushed
    config_digest = [d for d in img.blobs if img.blobs[d] == img.config][0]
    proxy.add("GET", r"/manifests/sha256:", "drop", at=10)
    proxy.add("GET", f"/blobs/{config_digest}", "drop", at=5)
    sleeps: list[float] = []
    facts = inspect(proxy, sleeps)
    assert facts.digest == img.manifest_digest and facts.os.version_id == "12"
    fetched = [e["fault"] for e in proxy.log if e["path"].endswith(config_digest)]
    assert fetched == ["drop", None]


def test_endless_drops_give_up(proxy, pushed):
    _, layer = pushed
    proxy.add("GET", f"/blobs/{layer}", "drop", at=100, times=20)
    with pytest.raises(UnavailableError, match="download kept failing"):
        inspect(proxy, [], http_policy=HttpPolicy(max_resumes=3))


def test_wrong_blob_bytes_are_bad_input(proxy, pushed, capsys):
    _, layer = pushed
    proxy.add("GET", f"/blobs/{layer}", "corrupt")
    assert main(["inspect", f"{proxy.host}/faults/img:v1", "--no-cache", "-o", "json"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""  # never a result from bad bytes
    assert captured.err.count("\n") == 1
    assert "digest mismatch" in captured.err or "corrupt" in captured.err


def test_wrong_manifest_bytes_are_bad_input(proxy, pushed):
    proxy.add("GET", r"/manifests/sha256:", "corrupt")
    with pytest.raises(BadInputError, match="digest mismatch"):
        inspect(proxy, [])


def test_wrong_config_bytes_are_bad_input(proxy, pushed):
    img, _ = pushed
    config_digest = [d for d in img.blobs if img.blobs[d] == img.config][0]
    proxy.add("GET", f"/blobs/{config_digest}", "corrupt")
    with pytest.raises(BadInputError, match="digest mismatch"):
        inspect(proxy, [])


def test_unreachable_registry_exit_3(monkeypatch, capsys):
    import time

    monkeypatch.setattr(time, "sleep", lambda s: None)  # the retries' waits, not the test's time
    port = free_port()  # nothing listens there
    assert main(["inspect", f"127.0.0.1:{port}/any/img:v1"]) == 3
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"cannot reach registry 127.0.0.1:{port}" in err
