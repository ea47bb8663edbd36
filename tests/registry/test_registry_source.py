"""The registry source against Debian's real docker-registry on 127.0.0.1."""

from __future__ import annotations

import base64
import json
import os
import socket

import pytest
import requests
from imagebuild import build_oci, make_layer
from registryfixture import PASSWORD, USER
from registrypush import Pusher

from imgcheck import api
from imgcheck.cli.main import main
from imgcheck.errors import BadInputError, UnavailableError, UsageError
from imgcheck.sources.platform import parse_platform
from imgcheck.sources.read_options import ReadOptions
from imgcheck.sources.reference import parse_reference
from imgcheck.sources.registry import RegistrySource

pytestmark = pytest.mark.registry


def os_release(version: str) -> bytes:
    return f'ID=debian\nVERSION_ID="{version}"\nPRETTY_NAME="Debian {version}"\n'.encode()


def image(version: str, arch: str = "amd64", compression: str | None = "gzip", env: list[str] | None = None):
    return build_oci([make_layer({"etc/os-release": os_release(version)})], compression=compression, arch=arch, env=env)


class RecordingSession(requests.Session):
    """A real session that remembers what it asked for."""

    def __init__(self):
        super().__init__()
        self.calls: list[tuple[str, str]] = []

    def request(self, method, url, *args, **kwargs):
        self.calls.append((method, url))
        return super().request(method, url, *args, **kwargs)


def open_recorded(ref: str):
    """Open `ref` through a recording session: (the opened image, the session's calls)."""
    session = RecordingSession()
    src = RegistrySource(parse_reference(ref), session=session)
    try:
        return src.open(), session.calls
    finally:
        src.close()


@pytest.fixture(scope="module")
def pushed(registry):
    p = Pusher(registry.url)
    single = image("12", compression="zstd", env=["PATH=/usr/bin", "NCCL_DEBUG=INFO"])
    p.push_image("test/single", "v1", single)
    amd, arm = image("12", "amd64"), image("13", "arm64")
    index_digest, _ = p.push_index("test/multi", "latest", {"linux/amd64": amd, "linux/arm64": arm})
    return {"single": single, "amd": amd, "arm": arm, "index": index_digest}


def test_single_image_zstd_layer(registry, pushed):
    facts = api.inspect_image(f"{registry.host}/test/single:v1")
    assert facts.os.id == "debian" and facts.os.version_id == "12"
    assert facts.digest == pushed["single"].manifest_digest
    assert facts.platform == "linux/amd64"
    assert facts.env["NCCL_DEBUG"] == "INFO"
    assert facts.layers[0].media_type == "application/vnd.oci.image.layer.v1.tar+zstd"


def test_registry_scheme_and_digest_reference(registry, pushed):
    digest = pushed["single"].manifest_digest
    facts = api.inspect_image(f"registry:{registry.host}/test/single@{digest}")
    assert facts.digest == digest and facts.os.version_id == "12"


def test_tag_resolved_by_head_and_manifests_fetched_by_digest(registry, pushed):
    opened, calls = open_recorded(f"{registry.host}/test/multi:latest")
    manifest_calls = [(m, u.rsplit("/manifests/", 1)[1]) for m, u in calls if "/manifests/" in u]
    assert manifest_calls[0] == ("HEAD", "latest")
    # every GET of a manifest names a digest: tag lookups cost no rate-limited GET
    assert all(ref.startswith("sha256:") for m, ref in manifest_calls if m == "GET")
    assert opened.digest == pushed["amd"].manifest_digest
    assert any(pushed["index"] in note for note in opened.notes)


@pytest.mark.filterwarnings("ignore::urllib3.exceptions.InsecureRequestWarning")  # the pusher's self-signed TLS
def test_loopback_registry_that_speaks_only_tls(tls_registry, capsys):
    """Loopback is asked over plain HTTP first; a TLS-only registry there is then read over TLS."""
    pusher = Pusher(tls_registry.url, verify=False)
    img = image("12")
    pusher.push_image("test/tls", "v1", img)
    opened, calls = open_recorded(f"{tls_registry.host}/test/tls:v1")
    assert opened.digest == img.manifest_digest
    assert calls[0] == ("GET", f"http://{tls_registry.host}/v2/")  # answered 400: not plain HTTP
    assert all(url.startswith("https://") for _, url in calls[1:])
    assert main(["inspect", f"{tls_registry.host}/test/tls:v1", "-o", "json", "--no-cache"]) == 0
    assert json.loads(capsys.readouterr().out)["image"]["digest"] == img.manifest_digest


def test_loopback_plain_http_registry_is_not_asked_over_tls(registry, pushed):
    _, calls = open_recorded(f"{registry.host}/test/single:v1")
    assert calls and all(url.startswith("http://") for _, url in calls)


def test_warm_recheck_is_one_head_and_follows_a_moved_tag(registry, tmp_path, monkeypatch):
    from imgcheck.view.reader import ReadStats

    monkeypatch.setenv("IMGCHECK_HOME", str(tmp_path))
    p = Pusher(registry.url)
    first, second = image("12"), image("13")
    p.push_image("test/moving", "v1", first)
    ref = f"{registry.host}/test/moving:v1"
    assert api.inspect_image(ref).os.version_id == "12"  # cold
    session, stats = RecordingSession(), ReadStats()
    warm = api.inspect_image(ref, ReadOptions(session=session, stats=stats))
    assert stats.facts_cached and warm.digest == first.manifest_digest and warm.os.version_id == "12"
    # the /v2/ probe and the tag's HEAD: no manifest, config or blob is fetched
    assert [(m, u.rsplit("/", 1)[1]) for m, u in session.calls] == [("GET", ""), ("HEAD", "v1")]
    p.push_image("test/moving", "v1", second)  # the tag moves to another image
    stats = ReadStats()
    moved = api.inspect_image(ref, ReadOptions(stats=stats))
    assert moved.digest == second.manifest_digest and moved.os.version_id == "13" and not stats.facts_cached


def test_recheck_of_a_pinned_digest_makes_no_request(registry, pushed, tmp_path, monkeypatch):
    from imgcheck.view.reader import ReadStats

    monkeypatch.setenv("IMGCHECK_HOME", str(tmp_path))
    ref = f"{registry.host}/test/multi@{pushed['index']}"
    assert api.inspect_image(ref).digest == pushed["amd"].manifest_digest
    session, stats = RecordingSession(), ReadStats()
    facts = api.inspect_image(ref, ReadOptions(session=session, stats=stats))
    assert stats.facts_cached and session.calls == [] and facts.digest == pushed["amd"].manifest_digest
    assert facts.reference == ref
    arm = api.inspect_image(ref, ReadOptions(platform=parse_platform("linux/arm64")))  # its own entry, read afresh
    assert arm.digest == pushed["arm"].manifest_digest
    # answered before the registry client exists: a fresh process does not even import the HTTP stack
    import subprocess
    import sys

    code = (
        "import sys\nfrom imgcheck import api\nf = api.inspect_image(sys.argv[1])\n"
        "print(f.digest, 'requests' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, ref],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "IMGCHECK_HOME": str(tmp_path)},
    ).stdout.split()
    assert out == [pushed["amd"].manifest_digest, "False"]


def test_warm_recheck_of_an_index_keeps_platforms_apart(registry, pushed, tmp_path, monkeypatch):
    monkeypatch.setenv("IMGCHECK_HOME", str(tmp_path))
    ref = f"{registry.host}/test/multi:latest"
    arm64 = parse_platform("linux/arm64")
    for _ in range(2):  # cold, then from the facts cache
        assert api.inspect_image(ref).digest == pushed["amd"].manifest_digest
        facts = api.inspect_image(ref, ReadOptions(platform=arm64))
        assert facts.digest == pushed["arm"].manifest_digest and facts.platform == "linux/arm64"


def test_index_defaults_to_linux_amd64(registry, pushed):
    facts = api.inspect_image(f"{registry.host}/test/multi:latest")
    assert facts.platform == "linux/amd64"
    assert facts.digest == pushed["amd"].manifest_digest
    assert facts.os.version_id == "12"


def test_index_platform_selection(registry, pushed):
    facts = api.inspect_image(f"{registry.host}/test/multi:latest", ReadOptions(platform=parse_platform("linux/arm64")))
    assert facts.platform == "linux/arm64"
    assert facts.digest == pushed["arm"].manifest_digest
    assert facts.os.version_id == "13"  # the arm64 image's own bytes, not the amd64 one's


def test_index_without_the_platform_fails_listing_what_exists(registry, pushed):
    with pytest.raises(BadInputError, match=r"no manifest for platform linux/s390x.*linux/amd64, linux/arm64"):
        api.inspect_image(f"{registry.host}/test/multi:latest", ReadOptions(platform=parse_platform("linux/s390x")))


def test_single_image_of_another_platform_is_refused(registry, pushed):
    with pytest.raises(BadInputError, match="not the requested linux/arm64"):
        api.inspect_image(f"{registry.host}/test/single:v1", ReadOptions(platform=parse_platform("linux/arm64")))


def test_missing_tag_and_repository_are_unavailable(registry, pushed):
    with pytest.raises(UnavailableError, match="not found"):
        api.inspect_image(f"{registry.host}/test/single:nope")
    with pytest.raises(UnavailableError, match="not found"):
        api.inspect_image(f"{registry.host}/test/absent:v1")


def test_cli_json_reports_digest_and_platform(registry, pushed, capsys):
    rc = main(["inspect", f"{registry.host}/test/multi:latest", "--platform", "linux/arm64", "-o", "json"])
    out = json.loads(capsys.readouterr().out)
    assert rc == 0
    assert out["image"]["digest"] == pushed["arm"].manifest_digest
    assert out["image"]["platform"] == "linux/arm64"


def test_cli_malformed_reference_exit_2(capsys):
    assert main(["inspect", "registry:Not/Valid:tag"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "invalid image reference" in err


def _lan_ip() -> str | None:
    """A non-loopback address of this machine (no packet is sent by a UDP connect)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            s.connect(("10.255.255.255", 1))
            ip = s.getsockname()[0]
        except OSError:
            return None
    return None if ip.startswith("127.") else ip


def test_plain_http_needs_insecure_registry_for_non_local_hosts(registry, pushed, capsys):
    """The registry reached through a non-loopback address: https only, unless --insecure-registry."""
    import threading
    from socketserver import BaseRequestHandler, ThreadingTCPServer

    ip = _lan_ip()
    if ip is None:
        pytest.skip("this machine has no non-loopback IPv4 address")

    class Forward(BaseRequestHandler):  # a byte pipe to the registry on 127.0.0.1
        def handle(self):
            upstream = socket.create_connection(("127.0.0.1", registry.port))

            def pump(a, b):
                try:
                    while data := a.recv(65536):
                        b.sendall(data)
                except OSError:
                    pass
                finally:
                    try:
                        b.shutdown(socket.SHUT_WR)
                    except OSError:
                        pass

            t = threading.Thread(target=pump, args=(upstream, self.request), daemon=True)
            t.start()
            pump(self.request, upstream)
            t.join(10)
            upstream.close()

    ThreadingTCPServer.allow_reuse_address = True
    server = ThreadingTCPServer((ip, 0), Forward)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    host = f"{ip}:{server.server_address[1]}"
    try:
        rc = main(["inspect", f"{host}/test/single:v1", "-o", "json"])
        err = capsys.readouterr().err
        assert rc == 3 and "TLS" in err and "--insecure-registry" in err and err.count("\n") == 1
        rc = main(["inspect", f"{host}/test/single:v1", "--insecure-registry", host, "-o", "json"])
        out = json.loads(capsys.readouterr().out)
        assert rc == 0 and out["image"]["digest"] == pushed["single"].manifest_digest
    finally:
        server.shutdown()
        server.server_close()


# --- authentication -----------------------------------------------------------------------------


def _docker_config(tmp_path, host, user=USER, password=PASSWORD):
    cfg = tmp_path / "docker"
    cfg.mkdir(exist_ok=True)
    auth = base64.b64encode(f"{user}:{password}".encode()).decode()
    (cfg / "config.json").write_text(json.dumps({"auths": {host: {"auth": auth}}}))
    return str(cfg)


@pytest.fixture
def no_credentials(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    for var in ("DOCKER_CONFIG", "REGISTRY_AUTH_FILE", "XDG_RUNTIME_DIR"):
        monkeypatch.delenv(var, raising=False)


@pytest.fixture(scope="module")
def basic_pushed(basic_registry):
    img = image("12")
    Pusher(basic_registry.url, auth=(USER, PASSWORD)).push_image("private/img", "v1", img)
    return img


def test_basic_auth_without_credentials_is_unavailable(basic_registry, basic_pushed, no_credentials, capsys):
    assert main(["inspect", f"{basic_registry.host}/private/img:v1"]) == 3
    err = capsys.readouterr().err
    assert "authentication required" in err and "no credentials found" in err and err.count("\n") == 1


def test_basic_auth_with_docker_config(basic_registry, basic_pushed, no_credentials, tmp_path, monkeypatch):
    monkeypatch.setenv("DOCKER_CONFIG", _docker_config(tmp_path, basic_registry.host))
    facts = api.inspect_image(f"{basic_registry.host}/private/img:v1")
    assert facts.digest == basic_pushed.manifest_digest and facts.os.version_id == "12"


def test_basic_auth_with_podman_auth_file(basic_registry, basic_pushed, no_credentials, tmp_path, monkeypatch):
    runtime = tmp_path / "run"
    (runtime / "containers").mkdir(parents=True)
    auth = base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
    (runtime / "containers" / "auth.json").write_text(
        json.dumps({"auths": {f"{basic_registry.host}/private": {"auth": auth}}})
    )
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    facts = api.inspect_image(f"{basic_registry.host}/private/img:v1")
    assert facts.digest == basic_pushed.manifest_digest


def test_basic_auth_wrong_password(basic_registry, basic_pushed, no_credentials, tmp_path, monkeypatch):
    monkeypatch.setenv("DOCKER_CONFIG", _docker_config(tmp_path, basic_registry.host, password="wrong"))
    with pytest.raises(UnavailableError, match="authentication required or failed.*credentials from"):
        api.inspect_image(f"{basic_registry.host}/private/img:v1")


@pytest.fixture(scope="module")
def token_pushed(token_registry):
    p = Pusher(token_registry.url, auth=token_registry.tokens.token_for)
    public, private = image("12"), image("13")
    p.push_image("public/img", "v1", public)
    p.push_image("private/img", "v1", private)
    layered = build_oci(
        [
            make_layer({"etc/os-release": os_release("11")}),
            make_layer({"etc/nccl.conf": b"NCCL_IB_HCA=mlx5_0\n"}),
            make_layer({"etc/os-release": os_release("12")}),
        ],
        compression="gzip",
    )
    p.push_image("private/layered", "v1", layered)
    return {"public": public, "private": private, "layered": layered}


def test_token_auth_anonymous_pull(token_registry, token_pushed, no_credentials):
    before = len(token_registry.tokens.requests)
    facts = api.inspect_image(f"{token_registry.host}/public/img:v1")
    assert facts.digest == token_pushed["public"].manifest_digest
    asked = token_registry.tokens.requests[before:]
    assert asked and all(r["user"] is None for r in asked)
    assert asked[0]["scope"] == ["repository:public/img:pull"] and asked[0]["service"] == ["imgcheck-test-registry"]


def test_token_auth_private_needs_credentials(token_registry, token_pushed, no_credentials, tmp_path, monkeypatch):
    with pytest.raises(UnavailableError, match="private/img"):
        api.inspect_image(f"{token_registry.host}/private/img:v1")
    monkeypatch.setenv("DOCKER_CONFIG", _docker_config(tmp_path, token_registry.host))
    before = len(token_registry.tokens.requests)
    facts = api.inspect_image(f"{token_registry.host}/private/img:v1")
    assert facts.digest == token_pushed["private"].manifest_digest and facts.os.version_id == "13"
    assert token_registry.tokens.requests[before]["user"] == USER


def test_token_auth_multi_layer_parallel_walk(token_registry, token_pushed, no_credentials, tmp_path, monkeypatch):
    """Layers are read by several threads at once with one repository token."""
    monkeypatch.setenv("DOCKER_CONFIG", _docker_config(tmp_path, token_registry.host))
    facts = api.inspect_image(f"{token_registry.host}/private/layered:v1")
    assert facts.digest == token_pushed["layered"].manifest_digest
    assert facts.os.version_id == "12" and facts.os.layer == facts.layers[2].diff_id
    assert facts.nccl_conf == {"NCCL_IB_HCA": "mlx5_0"}


def test_token_server_refusing_credentials(token_registry, token_pushed, no_credentials, tmp_path, monkeypatch):
    monkeypatch.setenv("DOCKER_CONFIG", _docker_config(tmp_path, token_registry.host, password="wrong"))
    with pytest.raises(UnavailableError, match="token server refused"):
        api.inspect_image(f"{token_registry.host}/private/img:v1")


def test_unknown_registry_reference_is_usage_error():
    with pytest.raises(UsageError):
        RegistrySource(parse_reference("127.0.0.1:5000/UPPER/case"))


def test_broken_credential_helper_does_not_block_anonymous_pull(
    token_registry, token_pushed, no_credentials, tmp_path, monkeypatch
):
    cfg = tmp_path / "docker"
    cfg.mkdir()
    (cfg / "config.json").write_text(json.dumps({"credsStore": "imgcheck-absent-helper"}))
    monkeypatch.setenv("DOCKER_CONFIG", str(cfg))
    facts = api.inspect_image(f"{token_registry.host}/public/img:v1")
    assert facts.digest == token_pushed["public"].manifest_digest
    with pytest.raises(UnavailableError, match="docker-credential-imgcheck-absent-helper"):
        api.inspect_image(f"{token_registry.host}/private/img:v1")
