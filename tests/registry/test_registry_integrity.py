"""Registry side of integrity: layers checked against diff_ids, credentials kept to their host."""

from __future__ import annotations

import base64
import json
import os
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from registrypush import Pusher
from test_integrity import cache_files, tampered_oci

from imgcheck.cli.main import main
from imgcheck.errors import UnavailableError
from imgcheck.sources.http import HttpClient, HttpPolicy
from imgcheck.sources.registry_auth import Credentials, RegistryAuth, may_send_credentials


@pytest.mark.registry
def test_registry_layer_not_matching_diff_id_is_refused(registry, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("IMGCHECK_HOME", str(tmp_path / "home"))
    _genuine, tampered = tampered_oci()
    Pusher(registry.url).push_image("hostile/diffid", "v1", tampered)
    host = registry.url.split("://", 1)[1]
    assert main(["inspect", f"{host}/hostile/diffid:v1"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "diff_id" in err, err
    assert not [f for f in cache_files(str(tmp_path / "home")) if "/layers/" in f or "/facts/" in f]


class _TokenServer:
    """A real HTTP token server that records the Authorization header of each request."""

    def __init__(self):
        seen = self.seen = []

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802
                seen.append(self.headers.get("Authorization"))
                if self.headers.get("Authorization") is None and "deny-anonymous" in self.path:
                    self.send_response(401)
                    self.end_headers()
                    return
                body = json.dumps({"token": "t0k3n"}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def stop(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def token_server():
    server = _TokenServer()
    yield server
    server.stop()


CREDS = Credentials(username="alice", password="secret", source="test config.json")


def _auth(registry: str, token_hosts=frozenset()):
    return RegistryAuth(
        registry,
        "team/app",
        HttpClient(HttpPolicy(max_attempts=1)),
        may_use_http=lambda h: True,
        lookup=lambda r, repo: CREDS,
        token_hosts=token_hosts,
    )


def test_credentials_not_sent_to_a_realm_on_another_host(token_server):
    # registry 127.0.0.1, realm "localhost": both loopback, but not the same host name
    auth = _auth("127.0.0.1:5000")
    token = auth._token({"realm": f"http://localhost:{token_server.port}/token"}, "repository:team/app:pull")
    assert token == "t0k3n" and token_server.seen == [None]  # asked anonymously


def test_withheld_credentials_are_named_when_access_is_refused(token_server):
    auth = _auth("127.0.0.1:5000")
    with pytest.raises(UnavailableError, match="IMGCHECK_TOKEN_HOSTS=localhost"):
        auth._token({"realm": f"http://localhost:{token_server.port}/deny-anonymous"}, "repository:team/app:pull")


def test_credentials_sent_to_own_host_and_to_allowed_hosts(token_server):
    expected = "Basic " + base64.b64encode(b"alice:secret").decode()
    _auth("127.0.0.1:5000")._token({"realm": f"http://127.0.0.1:{token_server.port}/token"}, "s")
    _auth("127.0.0.1:5000", frozenset({"localhost"}))._token(
        {"realm": f"http://localhost:{token_server.port}/token"}, "s"
    )
    assert token_server.seen == [expected, expected]


@pytest.mark.parametrize(
    "registry,realm,allowed",
    [
        ("docker.io", "auth.docker.io", True),  # Docker Hub's token server is a subdomain
        ("ghcr.io", "ghcr.io", True),
        ("quay.io:443", "quay.io", True),
        ("nvcr.io", "authn.nvidia.com", False),  # another domain: only when the user allows it
        ("team.azurecr.io", "other.azurecr.io", False),  # a shared parent domain is not ownership
        ("registry.example.com", "registry.example.com.evil.net", False),
        ("registry.example.com", "evilregistry.example.com", False),
        ("[::1]:5000", "::1", True),
    ],
)
def test_may_send_credentials(registry, realm, allowed):
    assert may_send_credentials(registry, realm) is allowed


def test_allowed_token_hosts_from_env():
    from imgcheck.sources.registry_auth import allowed_token_hosts

    assert allowed_token_hosts({"IMGCHECK_TOKEN_HOSTS": "authn.nvidia.com, Login.Example.com:443"}) == frozenset(
        {"authn.nvidia.com", "login.example.com"}
    )
    assert may_send_credentials("nvcr.io", "authn.nvidia.com", frozenset({"authn.nvidia.com"}))
