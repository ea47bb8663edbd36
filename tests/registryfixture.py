"""Real registries for the tests: Debian's `docker-registry` (CNCF distribution 2.8) on 127.0.0.1.

Three flavours, each a session fixture: anonymous, htpasswd (Basic challenge), and token auth
(Bearer challenge) backed by a tiny local token server that signs RS256 JWTs whose certificate the
registry trusts (`auth: token: rootcertbundle`), the way Docker Hub's auth.docker.io works.
"""

from __future__ import annotations

import base64
import datetime
import json
import os
import shutil
import socket
import subprocess
import threading
import time
import uuid
import warnings
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

import pytest
import requests

REGISTRY_BIN = shutil.which("docker-registry") or "/usr/bin/docker-registry"
USER, PASSWORD = "imgcheck", "s3cret-pw"
SERVICE, ISSUER = "imgcheck-test-registry", "imgcheck-test-token-server"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def htpasswd_line(user: str, password: str) -> str:
    import bcrypt  # distribution's htpasswd accepts bcrypt hashes only

    return f"{user}:{bcrypt.hashpw(password.encode(), bcrypt.gensalt(rounds=5)).decode()}\n"


def self_signed(common_name: str, ca: bool = False, ip: str | None = None):
    """(private key, certificate) made with `cryptography`, valid from yesterday for 30 days."""
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import rsa
    from cryptography.x509.oid import NameOID

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])
    now = datetime.datetime.now(datetime.UTC)
    builder = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=30))
        .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
    )
    if ip:
        builder = builder.add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address(ip))]), critical=False
        )
    return key, builder.sign(key, hashes.SHA256())


def _write_tls_pair(workdir: str) -> str:
    """A certificate for 127.0.0.1 and its key, as the registry's `http: tls:` block."""
    from cryptography.hazmat.primitives import serialization

    key, cert = self_signed("127.0.0.1", ip="127.0.0.1")
    cert_path, key_path = os.path.join(workdir, "tls-cert.pem"), os.path.join(workdir, "tls-key.pem")
    with open(cert_path, "wb") as fh:
        fh.write(cert.public_bytes(serialization.Encoding.PEM))
    with open(key_path, "wb") as fh:
        fh.write(
            key.private_bytes(
                serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL, serialization.NoEncryption()
            )
        )
    return f"  tls:\n    certificate: {cert_path}\n    key: {key_path}\n"


class RegistryServer:
    def __init__(self, workdir: str, auth_yaml: str = "", tls: bool = False):
        self.port = free_port()
        self.host = f"127.0.0.1:{self.port}"
        self.url = f"{'https' if tls else 'http'}://{self.host}"
        tls_yaml = _write_tls_pair(workdir) if tls else ""
        os.makedirs(os.path.join(workdir, "storage"), exist_ok=True)
        config = os.path.join(workdir, "config.yml")
        with open(config, "w") as fh:
            fh.write(f"""version: 0.1
log:
  level: error
  accesslog:
    disabled: true
storage:
  filesystem:
    rootdirectory: {workdir}/storage
  maintenance:
    uploadpurging:
      enabled: false
http:
  addr: {self.host}
  secret: imgcheck-test-secret
{tls_yaml}{auth_yaml}""")
        self.log = open(os.path.join(workdir, "registry.log"), "wb")
        self.proc = subprocess.Popen([REGISTRY_BIN, "serve", config], stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 20
        while True:
            try:
                with warnings.catch_warnings():  # a TLS registry's self-signed certificate
                    warnings.simplefilter("ignore")
                    requests.get(self.url + "/v2/", timeout=1, verify=False)
                break
            except requests.ConnectionError as exc:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError(f"docker-registry did not start; see {workdir}/registry.log") from exc
                time.sleep(0.05)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        self.log.close()


class TokenServer:
    """GET /token?service=..&scope=repository:NAME:pull[,push] -> {"token": JWT}.

    Repositories under `public/` may be pulled anonymously; anything else needs USER/PASSWORD.
    Wrong credentials get 401, as real token servers answer.
    """

    def __init__(self, workdir: str):
        from cryptography.hazmat.primitives import serialization

        self.key, cert = self_signed("imgcheck test token signer", ca=True)
        self.cert_der = cert.public_bytes(serialization.Encoding.DER)
        self.cert_path = os.path.join(workdir, "token-cert.pem")
        with open(self.cert_path, "wb") as fh:
            fh.write(cert.public_bytes(serialization.Encoding.PEM))
        self.requests: list[dict] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # keep test output clean
                pass

            def do_GET(self):
                q = parse_qs(urlsplit(self.path).query)
                user = None
                header = self.headers.get("Authorization", "")
                if header.startswith("Basic "):
                    user, _, pw = base64.b64decode(header[6:]).decode().partition(":")
                    if (user, pw) != (USER, PASSWORD):
                        self.send_response(401)
                        self.end_headers()
                        return
                server.requests.append({"user": user, "scope": q.get("scope"), "service": q.get("service")})
                access = []
                for scope in q.get("scope", []):
                    kind, name, actions = scope.split(":")
                    if user or name.startswith("public/"):
                        access.append({"type": kind, "name": name, "actions": actions.split(",")})
                body = json.dumps({"token": server.sign(user or "", access), "expires_in": 300}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/token"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def sign(self, subject: str, access: list) -> str:
        from cryptography.hazmat.primitives import hashes
        from cryptography.hazmat.primitives.asymmetric import padding

        def b64(data: bytes) -> str:
            return base64.urlsafe_b64encode(data).rstrip(b"=").decode()

        now = int(time.time())
        header = {"typ": "JWT", "alg": "RS256", "x5c": [base64.b64encode(self.cert_der).decode()]}
        claims = {
            "iss": ISSUER,
            "sub": subject,
            "aud": SERVICE,
            "exp": now + 300,
            "nbf": now - 10,
            "iat": now,
            "jti": uuid.uuid4().hex,
            "access": access,
        }
        signing_input = b64(json.dumps(header).encode()) + "." + b64(json.dumps(claims).encode())
        sig = self.key.sign(signing_input.encode(), padding.PKCS1v15(), hashes.SHA256())
        return signing_input + "." + b64(sig)

    def token_for(self, scope: str) -> str:
        resp = requests.get(self.url, params={"service": SERVICE, "scope": scope}, auth=(USER, PASSWORD), timeout=10)
        resp.raise_for_status()
        return resp.json()["token"]

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def _need_registry() -> None:
    if not os.path.exists(REGISTRY_BIN):
        pytest.skip("Debian's docker-registry is not installed (apt-get install docker-registry)")


@pytest.fixture(scope="session")
def registry(tmp_path_factory):
    """An anonymous registry; yields the RegistryServer (.host, .url)."""
    _need_registry()
    server = RegistryServer(str(tmp_path_factory.mktemp("registry")))
    yield server
    server.stop()


@pytest.fixture(scope="session")
def tls_registry(tmp_path_factory):
    """An anonymous registry on 127.0.0.1 that speaks only TLS (a self-signed certificate)."""
    _need_registry()
    server = RegistryServer(str(tmp_path_factory.mktemp("registry-tls")), tls=True)
    yield server
    server.stop()


@pytest.fixture(scope="session")
def basic_registry(tmp_path_factory):
    """A registry behind htpasswd: a `Basic` challenge, USER/PASSWORD accepted."""
    _need_registry()
    work = str(tmp_path_factory.mktemp("registry-basic"))
    htpasswd = os.path.join(work, "htpasswd")
    with open(htpasswd, "w") as fh:
        fh.write(htpasswd_line(USER, PASSWORD))
    server = RegistryServer(work, f"auth:\n  htpasswd:\n    realm: imgcheck-test\n    path: {htpasswd}\n")
    server.push_auth = (USER, PASSWORD)
    yield server
    server.stop()


@pytest.fixture(scope="session")
def token_registry(tmp_path_factory):
    """A registry with `auth: token`: a `Bearer` challenge answered by a local token server."""
    _need_registry()
    work = str(tmp_path_factory.mktemp("registry-token"))
    tokens = TokenServer(work)
    server = RegistryServer(
        work,
        f"""auth:
  token:
    realm: {tokens.url}
    service: {SERVICE}
    issuer: {ISSUER}
    rootcertbundle: {tokens.cert_path}
""",
    )
    server.tokens = tokens
    yield server
    server.stop()
    tokens.stop()
