"""What a slow, hostile or vanishing client can do to `imgcheck serve` (the real process, raw sockets).

- A request without the secret is answered 401 from its headers alone: its body is never read.
- A body that does not arrive in time is answered 408; headers that do not arrive in time, or nothing at
  all, get the connection closed; idle connections beyond the budget are shed so /livez still answers.
- A client that disconnects mid-body leaves no traceback in the log and the service keeps serving.
- SIGTERM with a stalled client still open ends the process (uvicorn's graceful-shutdown timeout).
- Deeply nested JSON and lone surrogate escapes are 400, not 500.
"""

from __future__ import annotations

import json
import socket
import time

import pytest
import requests
from servicekit import SECRET, ServiceProcess, db_rows, envelope, imgcheck_home, post_event, wait_for, write_config  # noqa: F401 (fixture)

D1 = "sha256:" + "7" * 64


def serve(tmp_path, log_level="warning", **server):
    extra = "\n".join(f"{k} = {v}" for k, v in server.items())
    db = str(tmp_path / "q.db")
    cfg = write_config(str(tmp_path / "c.toml"), "127.0.0.1:1", database=db, extra_server=extra)
    proc = ServiceProcess(cfg, str(tmp_path), log_level=log_level)
    proc.db = db
    return proc


def open_post(port: int, authorization: str | None, length: int, first_bytes: bytes = b"") -> socket.socket:
    """Send a POST's headers (and maybe the start of its body) and leave the rest unsent."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=20)
    head = [
        "POST /webhook HTTP/1.1",
        f"Host: 127.0.0.1:{port}",
        "Content-Type: application/json",
        f"Content-Length: {length}",
    ]
    if authorization:
        head.append(f"Authorization: {authorization}")
    sock.sendall(("\r\n".join(head) + "\r\n\r\n").encode() + first_bytes)
    return sock


def read_status(sock: socket.socket) -> int:
    data = b""
    while b"\r\n" not in data:
        chunk = sock.recv(4096)
        if not chunk:
            break
        data += chunk
    return int(data.split(b" ", 2)[1]) if data.startswith(b"HTTP/1.1 ") else -1


@pytest.fixture
def proc(tmp_path, imgcheck_home):
    p = serve(tmp_path, body_timeout_seconds=1, max_connections=6, shutdown_timeout_seconds=1, header_timeout_seconds=1)
    yield p
    p.kill()


def test_unauthenticated_upload_is_refused_before_its_body(proc):
    sock = open_post(proc.port, "Bearer wrong", 60_000)  # the body is never sent
    try:
        assert read_status(sock) == 401
    finally:
        sock.close()


def test_slow_body_is_answered_408_and_nothing_is_queued(proc):
    body = envelope("team/app", D1)
    sock = open_post(proc.port, f"Bearer {SECRET}", len(body), body[:20])
    try:
        assert read_status(sock) == 408
    finally:
        sock.close()
    assert db_rows(proc.db, "SELECT COUNT(*) FROM jobs") == [(0,)]
    assert post_event(proc.base, body).status_code == 202  # a whole body still goes through


def test_disconnect_mid_body_is_not_a_traceback(proc):
    body = envelope("team/app", D1)
    for _ in range(3):
        sock = open_post(proc.port, f"Bearer {SECRET}", len(body), body[: len(body) // 2])
        time.sleep(0.2)  # let the server start reading the body
        sock.close()
    assert post_event(proc.base, body).status_code == 202
    assert requests.get(proc.base + "/healthz", timeout=5).status_code == 200
    out = proc.output()
    assert "Traceback" not in out and "disconnected before the body was complete" in out, out[-3000:]


def test_silent_connections_are_shed_and_livez_still_answers(proc):
    """The issue's failure: idle connections beyond max_connections made every request, /livez too, a 503."""
    stalled = [socket.create_connection(("127.0.0.1", proc.port), timeout=10) for _ in range(30)]  # 5x the limit
    try:
        for path in ("/livez", "/healthz"):
            assert requests.get(proc.base + path, timeout=5).status_code == 200
        assert post_event(proc.base, envelope("team/app", D1)).status_code == 202
        closed = sum(s.recv(1) == b"" for s in stalled)  # shed ones read EOF; the rest time out
    except TimeoutError:
        closed = -1
    finally:
        for s in stalled:
            s.close()
    assert closed != 0
    assert "http.connections_shed" in proc.output()


def test_headers_that_never_complete_are_cut_at_the_header_timeout(proc):
    sock = socket.create_connection(("127.0.0.1", proc.port), timeout=20)
    try:
        sock.sendall(b"GET /livez HTTP/1.1\r\nHost: x\r\n")  # and never the blank line
        assert sock.recv(1024) == b""  # closed by the server (header_timeout_seconds = 1), no answer
        silent = socket.create_connection(("127.0.0.1", proc.port), timeout=20)
        assert silent.recv(1024) == b""  # a connection that sends nothing at all, likewise
        silent.close()
    finally:
        sock.close()


def test_sigterm_with_a_stalled_client_still_exits(tmp_path, imgcheck_home):
    p = serve(tmp_path, "info", body_timeout_seconds=120, shutdown_timeout_seconds=1)
    body = envelope("team/app", D1)
    sock = open_post(p.port, f"Bearer {SECRET}", len(body), body[:20])
    try:
        time.sleep(0.3)
        # terminate() waits at most 20 s; without the shutdown timeout uvicorn waits for the client forever.
        # uvicorn re-raises the SIGTERM after its orderly shutdown, hence -15
        assert p.terminate() in (0, -15)
        assert "Finished server process" in p.output(), p.output()[-2000:]
    finally:
        sock.close()
        p.kill()


@pytest.mark.parametrize(
    "body",
    [
        b'{"events": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
        json.dumps(
            {
                "events": [
                    {
                        "id": "\ud800",
                        "action": "push",
                        "target": {
                            "mediaType": "application/vnd.oci.image.manifest.v1+json",
                            "digest": D1,
                            "repository": "a/b",
                        },
                    }
                ]
            }
        ).encode(),
        b'{"events": [], "x": "\\udfff"}',
    ],
)
def test_nesting_and_lone_surrogates_are_400(proc, body):
    resp = post_event(proc.base, body[:60_000] if len(body) > 65536 else body)
    assert resp.status_code == 400, resp.text
    assert db_rows(proc.db, "SELECT COUNT(*) FROM jobs") == [(0,)]
    assert "Traceback" not in proc.output()
