"""A warm re-check by tag asks one anonymous HEAD with http.client and never imports requests;
anything but a plain 200 with a digest falls back to the registry client."""

from __future__ import annotations

import http.server
import os
import subprocess
import sys
import threading

import pytest
from imagebuild import build_oci, make_layer
from registrypush import Pusher

from imgcheck import api
from imgcheck.sources import tag_head
from imgcheck.sources.read_options import ReadOptions
from imgcheck.sources.reference import parse_reference
from imgcheck.sources.tag_head import anonymous_tag_digest
from imgcheck.view.reader import ReadStats

pytestmark = pytest.mark.registry

CHECK = (
    "import sys\nfrom imgcheck import api\nf = api.inspect_image(sys.argv[1])\n"
    "print(f.digest, f.os.version_id, 'requests' in sys.modules)"
)


def image(version: str):
    return build_oci([make_layer({"etc/os-release": f'ID=debian\nVERSION_ID="{version}"\n'.encode()})])


def fresh_process(ref: str, home) -> list[str]:
    return subprocess.run(
        [sys.executable, "-c", CHECK, ref],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "IMGCHECK_HOME": str(home)},
        timeout=120,
    ).stdout.split()


def test_warm_recheck_by_tag_imports_no_requests_and_follows_a_moved_tag(registry, tmp_path):
    p = Pusher(registry.url)
    first, second = image("12"), image("13")
    p.push_image("test/head-moving", "v1", first)
    ref = f"{registry.host}/test/head-moving:v1"
    assert fresh_process(ref, tmp_path) == [first.manifest_digest, "12", "True"]  # cold: the registry client
    assert fresh_process(ref, tmp_path) == [first.manifest_digest, "12", "False"]  # warm: one HEAD, stdlib only
    p.push_image("test/head-moving", "v1", second)
    assert fresh_process(ref, tmp_path) == [second.manifest_digest, "13", "True"]  # moved: read afresh
    assert fresh_process(ref, tmp_path) == [second.manifest_digest, "13", "False"]


@pytest.mark.filterwarnings("ignore::urllib3.exceptions.InsecureRequestWarning")  # the pusher's self-signed TLS
def test_a_tls_only_loopback_registry_falls_back_to_the_registry_client(tls_registry, tmp_path):
    built = image("12")
    Pusher(tls_registry.url, verify=False).push_image("test/head-tls", "v1", built)
    ref = parse_reference(f"{tls_registry.host}/test/head-tls:v1")
    assert anonymous_tag_digest(ref, memo_dir=str(tmp_path)) is None  # plain HTTP to a TLS port: 400
    assert os.listdir(tmp_path) == []  # not a credentials problem: nothing noted
    fresh_process(f"{tls_registry.host}/test/head-tls:v1", tmp_path)  # fills the cache
    assert fresh_process(f"{tls_registry.host}/test/head-tls:v1", tmp_path) == [built.manifest_digest, "12", "True"]


def test_a_registry_that_wants_credentials_is_noted_and_not_asked_anonymously_again(
    token_registry, tmp_path, monkeypatch
):
    monkeypatch.setenv("IMGCHECK_HOME", str(tmp_path))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))  # no credentials of the machine's user
    for var in ("DOCKER_CONFIG", "REGISTRY_AUTH_FILE", "XDG_RUNTIME_DIR"):
        monkeypatch.delenv(var, raising=False)
    built = image("12")
    Pusher(token_registry.url, auth=token_registry.tokens.token_for).push_image("public/head", "v1", built)
    ref = f"{token_registry.host}/public/head:v1"
    assert api.inspect_image(ref).digest == built.manifest_digest  # cold: the anonymous HEAD got 401
    notes = os.listdir(tmp_path / "cache" / "hosts")
    assert notes == [token_registry.host.replace(":", "_") + ".needs-credentials"]

    def never(*_a, **_k):
        raise AssertionError("asked anonymously again")

    monkeypatch.setattr(tag_head, "_connection", never)
    stats = ReadStats()
    # the token dance of the registry client, then the facts cache
    warm = api.inspect_image(ref, ReadOptions(stats=stats))
    assert stats.facts_cached and warm.digest == built.manifest_digest


def test_a_proxy_in_the_environment_leaves_the_head_to_the_registry_client(registry, monkeypatch):
    built = image("12")
    Pusher(registry.url).push_image("test/head-proxy", "v1", built)
    ref = parse_reference(f"{registry.host}/test/head-proxy:v1")
    assert anonymous_tag_digest(ref) == built.manifest_digest
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.invalid:3128")
    assert anonymous_tag_digest(ref) is None


class _Answer(http.server.BaseHTTPRequestHandler):
    status, digest = 200, None

    def do_HEAD(self):  # noqa: N802 (http.server's naming)
        self.send_response(self.status)
        if self.digest:
            self.send_header("Docker-Content-Digest", self.digest)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *_args):
        pass


@pytest.mark.parametrize(
    "status, digest",
    [
        (200, None),  # no digest offered
        (200, "sha256:not-hex"),  # a malformed one
        (200, "md5:" + "0" * 32),  # an algorithm imgcheck does not verify
        (500, "sha256:" + "a" * 64),  # an error with a plausible header
        (404, None),  # the registry client reports the missing tag
    ],
)
def test_anything_but_a_plain_answer_is_none_and_noted_only_for_credentials(tmp_path, status, digest):
    handler = type("Answer", (_Answer,), {"status": status, "digest": digest})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        ref = parse_reference(f"127.0.0.1:{server.server_port}/x/y:v1")
        assert anonymous_tag_digest(ref, memo_dir=str(tmp_path)) is None
        assert os.listdir(tmp_path) == []
    finally:
        server.shutdown()
        server.server_close()


def test_an_unreachable_registry_is_none(tmp_path):
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: nothing listens there
    assert anonymous_tag_digest(parse_reference(f"127.0.0.1:{port}/x/y:v1"), memo_dir=str(tmp_path)) is None
