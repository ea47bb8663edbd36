"""Registry credentials (Docker config.json, podman auth.json) and the 401-challenge dance.

Credential lookup, first match wins:
  1. $REGISTRY_AUTH_FILE (podman/skopeo's explicit auth file),
  2. Docker's config.json ($DOCKER_CONFIG/config.json, else ~/.docker/config.json): `auths`,
     `credsStore`, `credHelpers`, resolved by the docker SDK (docker.auth), which runs the
     `docker-credential-<helper>` programs,
  3. podman's $XDG_RUNTIME_DIR/containers/auth.json, then ~/.config/containers/auth.json.
auth.json keys may name a namespace (`quay.io/team`); the most specific key wins, as in
containers-auth.json(5).

Challenge handling follows the distribution token spec (docs/spec/auth/token.md): a 401 with
`WWW-Authenticate: Bearer realm=...,service=...,scope=...` -> GET the realm (with Basic credentials
when we have them) -> `token`/`access_token`. A `Basic` challenge gets the credentials directly.
"""

from __future__ import annotations

import base64
import json
import os
import re
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import requests

from ..errors import BadInputError, UnavailableError
from .http import HttpClient


def _internal_address(host: str) -> bool:
    """A literal loopback, link-local or private IP (names are not resolved here)."""
    import ipaddress

    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return host == "localhost"
    return ip.is_loopback or ip.is_link_local or ip.is_private


@dataclass(frozen=True)
class Credentials:
    username: str | None = None
    password: str | None = None
    identity_token: str | None = None  # an OAuth2 refresh token (docker login to some registries)
    source: str = ""  # where they came from, for messages; never the secret itself

    def __repr__(self) -> str:  # keep secrets out of tracebacks and logs
        return f"Credentials(username={self.username!r}, source={self.source!r})"


# ---------------------------------------------------------------------------------------------
# Lookup


def _home(env: Mapping[str, str]) -> str:
    return env.get("HOME") or os.path.expanduser("~")


def docker_config_path(env: Mapping[str, str] = os.environ) -> str:
    base = env.get("DOCKER_CONFIG") or os.path.join(_home(env), ".docker")
    return os.path.join(base, "config.json")


def podman_auth_paths(env: Mapping[str, str] = os.environ) -> list[str]:
    paths = []
    if env.get("XDG_RUNTIME_DIR"):
        paths.append(os.path.join(env["XDG_RUNTIME_DIR"], "containers", "auth.json"))
    paths.append(os.path.join(_home(env), ".config", "containers", "auth.json"))
    return paths


def _helper_get(helper: str, server: str, path: str) -> Credentials | None:
    """Ask `docker-credential-<helper>` through the docker SDK's credential store client."""
    from docker import credentials as dc  # type: ignore[import-untyped]  # ships no type hints

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the SDK warns about a missing helper; we raise instead
            data = dc.Store(helper).get(server)
    except dc.CredentialsNotFound:
        return None
    except dc.StoreError as exc:
        raise UnavailableError(
            f"credential helper docker-credential-{helper} (from {path}) failed for "
            f"{server}: {str(exc).strip().splitlines()[0] if str(exc).strip() else exc}"
        ) from None
    user, secret = data.get("Username"), data.get("Secret")
    if user == "<token>":
        return Credentials(identity_token=secret, source=f"docker-credential-{helper}")
    return Credentials(username=user, password=secret, source=f"docker-credential-{helper}")


def _from_entry(entry: object, source: str) -> Credentials | None:
    if not isinstance(entry, dict):
        return None
    if entry.get("identitytoken"):
        return Credentials(identity_token=str(entry["identitytoken"]), source=source)
    if entry.get("auth"):
        try:
            user, password = base64.b64decode(entry["auth"]).decode("utf-8").split(":", 1)
        except (ValueError, UnicodeDecodeError):
            raise BadInputError(f"{source}: the 'auth' value is not base64 of user:password") from None
        return Credentials(username=user, password=password, source=source)
    if entry.get("username") and entry.get("password"):
        return Credentials(username=str(entry["username"]), password=str(entry["password"]), source=source)
    return None


def _key_host_path(key: str) -> str:
    """A config key (`https://host/v1/`, `host`, `host/ns/repo`) -> `host[/path]`."""
    if "://" in key:
        parts = urlsplit(key)
        path = parts.path.strip("/")
        # legacy Docker keys end in /v1/ or /v2/; those are not namespaces
        if path in ("v1", "v2"):
            path = ""
        return parts.netloc + ("/" + path if path else "")
    return key.strip("/")


def _read_json(path: str) -> dict[str, Any] | None:
    try:
        with open(path, "rb") as fh:
            doc = json.load(fh)
    except FileNotFoundError:
        return None
    except (OSError, ValueError, UnicodeDecodeError) as exc:
        raise BadInputError(f"{path}: not a readable credentials file ({exc.__class__.__name__}: {exc})") from None
    if not isinstance(doc, dict):
        raise BadInputError(f"{path}: not a credentials file (expected a JSON object)")
    return doc


def _from_auth_json(path: str, registry: str, repository: str) -> Credentials | None:
    """containers-auth.json(5): `auths` keyed by host or host/namespace, plus `credHelpers`."""
    doc = _read_json(path)
    if doc is None:
        return None
    helpers = doc.get("credHelpers") or {}
    if isinstance(helpers, dict) and isinstance(helpers.get(registry), str):
        found = _helper_get(helpers[registry], registry, path)
        if found:
            return found
    auths = doc.get("auths") or {}
    if not isinstance(auths, dict):
        raise BadInputError(f"{path}: 'auths' is not an object")
    wanted = f"{registry}/{repository}"
    best: tuple[int, Credentials] | None = None
    for key, entry in auths.items():
        scope = _key_host_path(key)
        if scope == registry or wanted == scope or wanted.startswith(scope + "/"):
            creds = _from_entry(entry, path)
            if creds and (best is None or len(scope) > best[0]):
                best = (len(scope), creds)
    return best[1] if best else None


def _from_docker_config(path: str, registry: str) -> Credentials | None:
    if not os.path.exists(path):
        return None
    from docker import auth as da
    from docker import errors as de

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the SDK warns about a missing helper; we raise instead
            config = da.load_config(config_path=path)
            found = config.resolve_authconfig(registry)
    except de.InvalidConfigFile as exc:
        raise BadInputError(f"{path}: {exc}") from None
    except de.DockerException as exc:  # a credential helper failed
        raise UnavailableError(f"{path}: {exc}") from None
    if not found:
        # The SDK reads only base64 `auth`; accept the explicit username/password form too.
        doc = _read_json(path) or {}
        for key, entry in (doc.get("auths") or {}).items():
            if _key_host_path(key) == registry:
                return _from_entry(entry, path)
        return None
    if found.get("IdentityToken"):
        return Credentials(identity_token=found["IdentityToken"], source=path)
    user = found.get("username") or found.get("Username")
    password = found.get("password") or found.get("Password")
    if user is None and password is None:
        return None
    return Credentials(username=user, password=password, source=path)


def find_credentials(registry: str, repository: str, env: Mapping[str, str] = os.environ) -> Credentials | None:
    """Credentials for `registry` (host[:port] as the user wrote it, `docker.io` for Docker Hub)."""
    if env.get("REGISTRY_AUTH_FILE"):
        found = _from_auth_json(env["REGISTRY_AUTH_FILE"], registry, repository)
        if found:
            return found
    found = _from_docker_config(docker_config_path(env), registry)
    if found:
        return found
    for path in podman_auth_paths(env):
        found = _from_auth_json(path, registry, repository)
        if found:
            return found
    return None


# ---------------------------------------------------------------------------------------------
# Challenges

_PARAM = re.compile(r'\s*([A-Za-z0-9_.-]+)\s*=\s*("(?:[^"\\]|\\.)*"|[^,\s]*)\s*,?')
_SCHEME = re.compile(r"\s*([A-Za-z][A-Za-z0-9_-]*)\s*")


def parse_challenges(header: str) -> list[tuple[str, dict[str, str]]]:
    """`WWW-Authenticate` -> [(scheme lower-cased, {param: value})], several challenges allowed."""
    out: list[tuple[str, dict[str, str]]] = []
    pos = 0
    while pos < len(header):
        m = _SCHEME.match(header, pos)
        if not m or not m.group(1):
            break
        scheme, pos = m.group(1).lower(), m.end()
        params: dict[str, str] = {}
        while pos < len(header):
            p = _PARAM.match(header, pos)
            if not p:
                break
            value = p.group(2)
            if value.startswith('"'):
                value = re.sub(r"\\(.)", r"\1", value[1:-1])
            params[p.group(1).lower()] = value
            pos = p.end()
        out.append((scheme, params))
        while pos < len(header) and header[pos] in ", ":
            pos += 1
    return out


TOKEN_HOSTS_ENV = "IMGCHECK_TOKEN_HOSTS"


def _hostname(host_port: str) -> str:
    """`host[:port]`, `[v6]:port` -> the host name, lower-cased (ports do not change who owns a host)."""
    host = host_port.strip().lower()
    if host.startswith("["):
        return host[1:].split("]", 1)[0]
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


def allowed_token_hosts(env: Mapping[str, str] = os.environ) -> frozenset[str]:
    """Hosts the user allows to receive registry credentials as a token realm (comma-separated)."""
    return frozenset(_hostname(h) for h in (env.get(TOKEN_HOSTS_ENV) or "").split(",") if h.strip())


def may_send_credentials(registry: str, realm_host: str, allowed: frozenset[str] = frozenset()) -> bool:
    """Credentials belong to the registry they were stored for: its own host, a subdomain of it
    (docker.io -> auth.docker.io), or a host the user named. Sharing a parent domain is not enough
    (tenant.azurecr.io must not send to other.azurecr.io)."""
    realm, own = realm_host.lower().rstrip("."), _hostname(registry).rstrip(".")
    return realm == own or realm.endswith("." + own) or realm in allowed


class RegistryAuth:
    """Authorization for one registry host: finds credentials lazily and answers 401s."""

    def __init__(
        self,
        registry: str,
        repository: str,
        http: HttpClient,
        may_use_http: Callable[[str], bool],
        lookup: Callable[[str, str], Credentials | None] = find_credentials,
        token_hosts: frozenset[str] | None = None,
    ):
        self.token_hosts = allowed_token_hosts() if token_hosts is None else token_hosts
        self.withheld: str | None = None  # a realm host credentials were not sent to, for messages
        self.registry = registry
        self.repository = repository
        self.http = http
        self.may_use_http = may_use_http
        self._lookup = lookup
        self._creds: Credentials | None = None
        self._looked_up = False
        self._problem: str | None = None
        self.header: str | None = None

    @property
    def credentials(self) -> Credentials | None:
        if not self._looked_up:
            self._looked_up = True
            try:
                self._creds = self._lookup(self.registry, self.repository)
            except UnavailableError as exc:
                # A broken credential helper must not block anonymous pulls of public images;
                # it is named if the registry then asks for credentials.
                self._problem = str(exc)
        return self._creds

    def describe_credentials(self) -> str:
        creds = self.credentials
        if creds and self.withheld:
            return (
                f"credentials from {creds.source} not sent to the token server {self.withheld}, which is not "
                f"{self.registry}'s host; to allow it set {TOKEN_HOSTS_ENV}={self.withheld}"
            )
        if creds:
            return f"credentials from {creds.source}"
        return f"no credentials: {self._problem}" if self._problem else "no credentials found"

    def headers(self) -> dict[str, str]:
        return {"Authorization": self.header} if self.header else {}

    def answer(self, resp: requests.Response, scope: str) -> bool:
        """Set a new Authorization header from a 401's challenge; False if nothing can be tried."""
        challenges = parse_challenges(resp.headers.get("WWW-Authenticate", ""))
        for scheme, params in challenges:
            if scheme == "bearer" and params.get("realm"):
                self.header = "Bearer " + self._token(params, scope)
                return True
        for scheme, _params in challenges:
            if scheme == "basic":
                creds = self.credentials
                if not creds or creds.username is None:
                    return False
                raw = f"{creds.username}:{creds.password or ''}".encode()
                self.header = "Basic " + base64.b64encode(raw).decode("ascii")
                return True
        return False

    def _token(self, params: dict[str, str], scope: str) -> str:
        realm = params["realm"]
        parts = urlsplit(realm)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise UnavailableError(f"{self.registry}: token realm {realm!r} is not an http(s) URL")
        if parts.scheme == "http" and not self.may_use_http(parts.netloc):
            raise UnavailableError(
                f"{self.registry}: refusing plain-http token realm {realm} (use --insecure-registry for a trusted host)"
            )
        if _internal_address(parts.hostname) and not _internal_address(self.registry.rsplit(":", 1)[0].strip("[]")):
            # a public registry must not steer credentials or requests at link-local/private hosts
            raise UnavailableError(f"{self.registry}: refusing token realm {realm} on an internal address")
        query = {"scope": params.get("scope") or scope}
        if params.get("service"):
            query["service"] = params["service"]
        creds = self.credentials
        if creds and not may_send_credentials(self.registry, parts.hostname, self.token_hosts):
            # The registry names a token server on someone else's host: ask it anonymously.
            self.withheld = parts.hostname
            creds = None
        verify = not self.may_use_http(parts.netloc)  # insecure hosts may have self-signed certs
        if creds and creds.identity_token:
            # OAuth2 refresh-token grant (distribution docs/spec/auth/oauth.md)
            resp = self.http.send(
                "POST",
                realm,
                verify=verify,
                data={
                    "grant_type": "refresh_token",
                    "refresh_token": creds.identity_token,
                    "client_id": "imgcheck",
                    **query,
                },
            )
        else:
            auth = (creds.username, creds.password or "") if creds and creds.username is not None else None
            resp = self.http.send("GET", realm, params={**query, "client_id": "imgcheck"}, auth=auth, verify=verify)
        with resp:
            if resp.status_code in (401, 403):
                raise UnavailableError(
                    f"{self.registry}: the token server refused access to {self.repository} "
                    f"(HTTP {resp.status_code}; {self.describe_credentials()})"
                )
            if resp.status_code != 200:
                raise UnavailableError(f"{self.registry}: token server {parts.netloc} answered HTTP {resp.status_code}")
            try:
                doc = resp.json()
            except ValueError:
                raise UnavailableError(f"{self.registry}: token server {parts.netloc} sent no JSON") from None
        token = doc.get("token") or doc.get("access_token") if isinstance(doc, dict) else None
        if not isinstance(token, str) or not token:
            raise UnavailableError(f"{self.registry}: token server {parts.netloc} sent no token")
        return token
