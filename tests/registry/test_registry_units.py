"""Reference parsing, challenge parsing, credential lookup and retry arithmetic (no network)."""

from __future__ import annotations

import base64
import json
import os
import stat

import pytest

from imgcheck.errors import BadInputError, UsageError
from imgcheck.sources.http import describe, retry_after
from imgcheck.sources.reference import is_local_host, parse_reference
from imgcheck.sources.registry_auth import find_credentials, parse_challenges


@pytest.mark.parametrize(
    "text, registry, api_host, repository, tag, digest",
    [
        ("debian", "docker.io", "registry-1.docker.io", "library/debian", "latest", None),
        ("debian:bookworm", "docker.io", "registry-1.docker.io", "library/debian", "bookworm", None),
        ("docker.io/debian", "docker.io", "registry-1.docker.io", "library/debian", "latest", None),
        (
            "index.docker.io/nvidia/cuda:12.4.1-base",
            "docker.io",
            "registry-1.docker.io",
            "nvidia/cuda",
            "12.4.1-base",
            None,
        ),
        ("nvcr.io/nvidia/pytorch:24.10-py3", "nvcr.io", "nvcr.io", "nvidia/pytorch", "24.10-py3", None),
        ("localhost:5000/team/img", "localhost:5000", "localhost:5000", "team/img", "latest", None),
        ("localhost/img:v1", "localhost", "localhost", "img", "v1", None),
        ("127.0.0.1:5000/a/b/c:x", "127.0.0.1:5000", "127.0.0.1:5000", "a/b/c", "x", None),
        ("[::1]:5000/img:1", "[::1]:5000", "[::1]:5000", "img", "1", None),
        ("ghcr.io/o/r@sha256:" + "a" * 64, "ghcr.io", "ghcr.io", "o/r", None, "sha256:" + "a" * 64),
        ("ghcr.io/o/r:t@sha256:" + "b" * 64, "ghcr.io", "ghcr.io", "o/r", "t", "sha256:" + "b" * 64),
        ("user/repo-name_x.y__z", "docker.io", "registry-1.docker.io", "user/repo-name_x.y__z", "latest", None),
    ],
)
def test_parse_reference(text, registry, api_host, repository, tag, digest):
    ref = parse_reference(text)
    assert (ref.registry, ref.api_host, ref.repository, ref.tag, ref.digest) == (
        registry,
        api_host,
        repository,
        tag,
        digest,
    )
    assert ref.reference == (digest or tag)


@pytest.mark.parametrize(
    "text",
    [
        "",
        " debian",
        "Debian",
        "nvcr.io/NVIDIA/pytorch",
        "debian:",
        "debian:-bad",
        "a//b",
        "/debian",
        "debian@sha256:abc",
        "debian@md5:" + "a" * 32,
        "https://nvcr.io/nvidia/pytorch",
        "debian:" + "x" * 129,
        "nvcr.io/",
        "bad_host-.io:5000/x",
        "repo/" + "a" * 300,
    ],
)
def test_malformed_references_are_usage_errors(text):
    with pytest.raises(UsageError):
        parse_reference(text)


def test_hostname_strips_port_and_brackets():
    assert parse_reference("[::1]:5000/img").hostname == "::1"
    assert parse_reference("127.0.0.1:5000/img").hostname == "127.0.0.1"
    assert parse_reference("nvcr.io/a/b").hostname == "nvcr.io"


@pytest.mark.parametrize(
    "host, local",
    [
        ("localhost", True),
        ("localhost:5000", True),
        ("127.0.0.1:5000", True),
        ("127.1.2.3", True),
        ("[::1]:5000", True),
        ("::1", True),
        ("10.0.0.1:5000", False),
        ("nvcr.io", False),
        ("localhost.example.com", False),
        ("[fe80::1]:5000", False),
    ],
)
def test_plain_http_is_only_for_loopback(host, local):
    assert is_local_host(host) is local


def test_parse_challenges():
    header = (
        'Bearer realm="https://auth.docker.io/token",service="registry.docker.io",'
        'scope="repository:library/ubuntu:pull", Basic realm="x\\"y"'
    )
    assert parse_challenges(header) == [
        (
            "bearer",
            {
                "realm": "https://auth.docker.io/token",
                "service": "registry.docker.io",
                "scope": "repository:library/ubuntu:pull",
            },
        ),
        ("basic", {"realm": 'x"y'}),
    ]
    assert parse_challenges('Basic realm="Registry Realm"') == [("basic", {"realm": "Registry Realm"})]
    assert parse_challenges("") == []


def test_retry_after_forms():
    class R:
        def __init__(self, v):
            self.headers = {"Retry-After": v} if v is not None else {}

    assert retry_after(R("3")) == 3.0
    assert retry_after(R(None)) is None
    assert retry_after(R("soon")) is None
    assert retry_after(R("Wed, 21 Oct 2015 07:28:00 GMT")) == 0.0  # a past date: retry now


def test_describe_shortens_network_errors():
    text = (
        "HTTPConnectionPool(host='127.0.0.1', port=1): Max retries exceeded with url: /v2/ (Caused by "
        "NewConnectionError('<urllib3.connection.HTTPConnection object>: Failed to establish a new "
        "connection: [Errno 111] Connection refused'))"
    )
    assert describe(Exception(text)) == "Connection refused"


def _auth(user, pw):
    return base64.b64encode(f"{user}:{pw}".encode()).decode()


def _env(tmp_path, **extra):
    env = {"HOME": str(tmp_path / "home")}
    env.update(extra)
    return env


def test_docker_config_auths(tmp_path):
    cfg = tmp_path / "dockercfg"
    cfg.mkdir()
    (cfg / "config.json").write_text(
        json.dumps(
            {
                "auths": {
                    "https://index.docker.io/v1/": {"auth": _auth("hubuser", "hubpw")},
                    "nvcr.io": {"auth": _auth("$oauthtoken", "nvkey")},
                }
            }
        )
    )
    env = _env(tmp_path, DOCKER_CONFIG=str(cfg))
    hub = find_credentials("docker.io", "library/debian", env)
    assert (hub.username, hub.password) == ("hubuser", "hubpw")
    nv = find_credentials("nvcr.io", "nvidia/pytorch", env)
    assert (nv.username, nv.password, nv.source) == ("$oauthtoken", "nvkey", str(cfg / "config.json"))
    assert find_credentials("ghcr.io", "o/r", env) is None
    assert "nvkey" not in repr(nv)  # secrets stay out of logs and tracebacks


def test_docker_config_cred_helper(tmp_path):
    """credHelpers run docker-credential-<name> through the docker SDK (a real helper program)."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    helper = bindir / "docker-credential-imgchecktest"
    helper.write_text(
        "#!/bin/sh\nread host\n"
        'if [ "$host" = "registry.example:5000" ]; then\n'
        '  echo \'{"ServerURL":"registry.example:5000","Username":"helperuser","Secret":"helperpw"}\'\n'
        "else echo 'credentials not found in native keychain'; exit 1; fi\n"
    )
    helper.chmod(helper.stat().st_mode | stat.S_IEXEC)
    cfg = tmp_path / "dockercfg"
    cfg.mkdir()
    (cfg / "config.json").write_text(json.dumps({"credHelpers": {"registry.example:5000": "imgchecktest"}}))
    old = os.environ["PATH"]
    os.environ["PATH"] = f"{bindir}:{old}"
    try:
        creds = find_credentials("registry.example:5000", "team/img", _env(tmp_path, DOCKER_CONFIG=str(cfg)))
    finally:
        os.environ["PATH"] = old
    assert (creds.username, creds.password) == ("helperuser", "helperpw")


def test_podman_auth_json_namespaces_and_order(tmp_path):
    runtime = tmp_path / "run"
    (runtime / "containers").mkdir(parents=True)
    (runtime / "containers" / "auth.json").write_text(
        json.dumps(
            {
                "auths": {
                    "quay.io": {"auth": _auth("hostwide", "a")},
                    "quay.io/team": {"auth": _auth("teamuser", "b")},
                }
            }
        )
    )
    env = _env(tmp_path, XDG_RUNTIME_DIR=str(runtime))
    assert find_credentials("quay.io", "team/img", env).username == "teamuser"  # most specific key wins
    assert find_credentials("quay.io", "other/img", env).username == "hostwide"
    explicit = tmp_path / "explicit.json"
    explicit.write_text(json.dumps({"auths": {"quay.io": {"auth": _auth("explicit", "c")}}}))
    env["REGISTRY_AUTH_FILE"] = str(explicit)
    assert find_credentials("quay.io", "team/img", env).username == "explicit"  # $REGISTRY_AUTH_FILE first


def test_corrupt_credentials_file_is_bad_input(tmp_path):
    bad = tmp_path / "auth.json"
    bad.write_text("{not json")
    with pytest.raises(BadInputError, match="auth.json"):
        find_credentials("quay.io", "x/y", _env(tmp_path, REGISTRY_AUTH_FILE=str(bad)))
