"""Notifications survive a crash between the commit and the POST (the outbox).

The real chain: Debian's docker-registry notifies `imgcheck serve` of a push of a real bookworm
image; the check fails on fleet `lab`, and the failure is committed together with its outbox row.
The notify receiver first takes the POST and never answers; the service is SIGKILLed while it
waits. Restarted with a receiver that answers, the service sends the notification from the outbox.
"""

from __future__ import annotations

import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from registryfixture import RegistryServer
from registrypush import Pusher, push_rootfs_image
from servicekit import (
    ServiceProcess,
    db_rows,
    free_port,
    imgcheck_home,
    need_registry,
    notifications_yaml,
    wait_for,
    write_config,
)  # noqa: F401 (fixture)

pytestmark = pytest.mark.registry


class Receiver(BaseHTTPRequestHandler):
    received: list = []

    def log_message(self, *a):
        pass

    def do_POST(self):
        type(self).received.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
        self.send_response(204)
        self.end_headers()


class Silent:
    """Accepts connections and reads the request, never answers (a receiver that hangs)."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}/hook"
        self.got = threading.Event()
        self.conns = []
        threading.Thread(target=self._run, daemon=True).start()

    def _run(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.conns.append(conn)
            if conn.recv(65536):
                self.got.set()

    def close(self):
        for c in self.conns:
            c.close()
        self.sock.close()


def config(tmp_path, registry, db, url):
    return write_config(
        str(tmp_path / "c.toml"), registry.host, database=db, notify=f'[notify]\nurl = "{url}"\ntimeout = 300\n'
    )


def test_notification_committed_before_a_crash_is_sent_after_restart(tmp_path, imgcheck_home, rootfs):
    need_registry()
    port = free_port()
    registry = RegistryServer(str(tmp_path / "registry"), notifications_yaml(f"http://127.0.0.1:{port}/webhook"))
    db = str(tmp_path / "q.db")
    silent = Silent()
    Receiver.received = []
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    first = second = None
    try:
        first = ServiceProcess(config(tmp_path, registry, db, silent.url), str(tmp_path), port=port)
        digest = push_rootfs_image(Pusher(registry.url), "team/trainer", "v1", rootfs("bookworm"))
        wait_for(silent.got.is_set, 60, "the notification POST to reach the receiver")
        assert db_rows(db, "SELECT state FROM jobs") == [("done",)]
        assert ("lab",) in db_rows(db, "SELECT fleet FROM outbox")  # committed with the result, not yet sent
        first.kill()  # mid-POST: the receiver has the request, the service never saw an answer
        assert Receiver.received == []

        second = ServiceProcess(
            config(tmp_path, registry, db, f"http://127.0.0.1:{httpd.server_address[1]}/hook"), str(tmp_path)
        )
        wait_for(lambda: Receiver.received, 30, "the outbox to be drained after the restart")
        (body,) = Receiver.received
        assert (body["digest"], body["fleet"], body["verdict"]) == (digest, "lab", "fail")
        assert "MEMLOCK-TOO-LOW" in body["findings"]
        # delivered (lab) and not wanted (prod: `ok`) rows are both gone
        wait_for(lambda: db_rows(db, "SELECT COUNT(*) FROM outbox") == [(0,)], 10, "the outbox to be empty")
        assert db_rows(db, "SELECT COUNT(*) FROM results") == [(2,)]  # the check itself was not repeated
    finally:
        for p in (first, second):
            if p:
                p.kill()
        silent.close()
        httpd.shutdown()
        registry.stop()
