"""The `imgcheck serve` configuration file (TOML).

Secrets may be written inline, or read from an environment variable (`<key>_env`) or a file
(`<key>_file`, e.g. a mounted Kubernetes Secret) so the config itself can live in a ConfigMap.
Relative paths are relative to the config file's directory.
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote, urlsplit

from ..errors import BadInputError, UnavailableError

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,62}")
DEFAULT_MAX_BODY = 1024 * 1024  # distribution envelopes are small; 1 MiB is generous


@dataclass(frozen=True)
class RegistryConfig:
    name: str  # the path word in POST /webhook/{name}
    host: str  # host[:port] the service pulls from (payload URLs are never trusted)
    insecure: bool = False  # allow plain HTTP / unverified TLS (always allowed for loopback)
    username: str | None = None
    password: str | None = None
    secret: str | None = None  # shared secret expected in `secret_header`
    secret_header: str = "Authorization"
    hmac_secret: str | None = None  # HMAC-SHA256 of the body, hex, in `hmac_header`
    hmac_header: str = "X-Hub-Signature-256"
    watch: tuple[str, ...] = ()  # repositories (fnmatch patterns) reconciled from the registry at start

    def __repr__(self) -> str:  # keep secrets out of logs and tracebacks
        return f"RegistryConfig(name={self.name!r}, host={self.host!r})"


@dataclass(frozen=True)
class FleetConfig:
    name: str
    selector: str | None = None  # an inventory fleet selector (imgcheck.node.inventory)
    node_facts: tuple[str, ...] = ()  # node facts files or directories of *.json
    # launch specs (files, or directories of *.yaml / *.yml) whose containers run pushed images on this fleet
    job_specs: tuple[str, ...] = ()


@dataclass(frozen=True)
class NotifyConfig:
    url: str
    timeout: float = 5.0
    verdicts: tuple[str, ...] = ("fail",)
    headers: dict[str, str] = field(default_factory=dict)

    def __repr__(self) -> str:
        return f"NotifyConfig(verdicts={self.verdicts!r})"  # the URL of a chat webhook is a secret


@dataclass(frozen=True)
class ServiceConfig:
    database: str
    registries: dict[str, RegistryConfig]
    fleets: dict[str, FleetConfig]
    workers: int = 2
    max_body_bytes: int = DEFAULT_MAX_BODY
    lease_seconds: float = 300.0  # a running job's lease; renewed while the check runs
    max_attempts: int = 8
    backoff_seconds: float = 10.0  # first retry delay when the registry is unreachable; doubles
    backoff_max_seconds: float = 3600.0
    poll_seconds: float = 2.0  # how often idle workers look for due retries
    public_url: str | None = None  # base URL used in notification links
    notify: NotifyConfig | None = None
    source: str = ""  # the config file path, for messages
    body_timeout_seconds: float = 10.0  # a webhook body not complete by then is answered 408
    max_connections: int = 200  # requests in progress beyond this are answered 503; idle connections are shed
    header_timeout_seconds: float = 10.0  # a connection without a complete request head by then is closed
    shutdown_timeout_seconds: float = 10.0  # on SIGTERM, requests still open after this are cut
    min_free_bytes: int = 64 * 1024 * 1024  # /readyz fails below this much free space for the database
    retention_days: float | None = 90.0  # finished jobs and their results older than this are deleted
    log_format: str = "json"  # json (one object per line) | text
    read_token: str | None = None  # when set, GET /, /results and /images need it (Bearer or Basic password)
    # postgresql://... for several replicas on one shared database (storage.open_store); None: SQLite
    database_url: str | None = None

    def default_registry(self) -> RegistryConfig | None:
        """POST /webhook without a name is allowed only when exactly one registry is configured."""
        if len(self.registries) == 1:
            return next(iter(self.registries.values()))
        return None


def load_config(path: str, env: dict[str, str] | None = None) -> ServiceConfig:
    env = dict(os.environ) if env is None else env
    try:
        with open(path, "rb") as fh:
            doc = tomllib.load(fh)
    except FileNotFoundError:
        raise UnavailableError(f"{path}: no such config file") from None
    except IsADirectoryError:
        raise BadInputError(f"{path}: is a directory, expected a TOML config file") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise BadInputError(f"{path}: not valid TOML ({exc})") from None
    return parse_config(doc, path, env)


def parse_config(doc: dict[str, Any], path: str, env: Mapping[str, str]) -> ServiceConfig:
    base = os.path.dirname(os.path.abspath(path))
    p = _Table(doc, path, base, env)
    p.only("server", "registries", "fleets", "notify")
    server = p.table("server")
    server.only(
        "database",
        "workers",
        "max_body_bytes",
        "lease_seconds",
        "max_attempts",
        "backoff_seconds",
        "backoff_max_seconds",
        "poll_seconds",
        "public_url",
        "body_timeout_seconds",
        "max_connections",
        "header_timeout_seconds",
        "shutdown_timeout_seconds",
        "read_token",
        "read_token_env",
        "read_token_file",
        "log_format",
        "min_free_bytes",
        "retention_days",
        "database_url",
        "database_url_env",
        "database_url_file",
    )
    # the URL may hold a password: inline, _env or _file (a mounted Secret); IMGCHECK_DATABASE_URL otherwise
    database_url = server.secret("database_url") or env.get("IMGCHECK_DATABASE_URL") or None
    _url_not_placeholder(database_url, f"{path}: database_url")
    _url_not_placeholder(env.get("IMGCHECK_CACHE_URL"), "IMGCHECK_CACHE_URL")
    if database_url and not database_url.startswith(("postgresql://", "postgres://", "sqlite:///")):
        raise BadInputError(f"{path}: database_url must start with postgresql:// or sqlite:///")
    database = server.path("database", required=not database_url)
    if database is None:  # a shared database: local state (registry auth file) goes under $IMGCHECK_HOME
        home = env.get("IMGCHECK_HOME") or os.path.join(os.path.expanduser("~"), ".imgcheck")
        database = os.path.join(home, "serve", "imgcheck.db")
    registries = {}
    reg_tables = p.table("registries")
    for name in reg_tables.keys():
        registries[name] = _registry(name, reg_tables.table(name))
    if not registries:
        raise BadInputError(f"{path}: configure at least one [registries.NAME] table")
    fleets = {}
    fleet_tables = p.table("fleets")
    for name in fleet_tables.keys():
        t = fleet_tables.table(name)
        t.only("selector", "node_facts", "job_specs")
        fleet = FleetConfig(
            name=name,
            selector=t.string("selector"),
            node_facts=tuple(t.path_list("node_facts")),
            job_specs=tuple(t.path_list("job_specs")),
        )
        if not fleet.selector and not fleet.node_facts:
            raise BadInputError(f"{path}: [fleets.{name}] needs `selector` or `node_facts`")
        fleets[name] = fleet
    if not fleets:
        raise BadInputError(f"{path}: configure at least one [fleets.NAME] table")
    notify = None
    if "notify" in doc:
        t = p.table("notify")
        t.only("url", "url_env", "url_file", "timeout", "verdicts", "headers")
        url = t.secret("url")
        if not url or not url.startswith(("http://", "https://")):
            raise BadInputError(f"{path}: [notify] url must be an http(s) URL")
        verdicts = tuple(t.str_list("verdicts") or ("fail",))
        bad = [v for v in verdicts if v not in ("ok", "warn", "fail")]
        if bad:
            raise BadInputError(f"{path}: [notify] verdicts must be ok, warn or fail, got {bad}")
        headers = t.raw("headers", {})
        if not isinstance(headers, dict) or not all(isinstance(v, str) for v in headers.values()):
            raise BadInputError(f"{path}: [notify] headers must be a table of strings")
        notify = NotifyConfig(
            url=url, timeout=t.number("timeout", 5.0, minimum=0.1), verdicts=verdicts, headers=dict(headers)
        )
    return ServiceConfig(
        database=database,
        registries=registries,
        fleets=fleets,
        workers=int(server.number("workers", 2, minimum=1, integer=True, maximum=64)),
        max_body_bytes=int(server.number("max_body_bytes", DEFAULT_MAX_BODY, minimum=1024, integer=True)),
        lease_seconds=server.number("lease_seconds", 300.0, minimum=1),
        max_attempts=int(server.number("max_attempts", 8, minimum=1, integer=True)),
        backoff_seconds=server.number("backoff_seconds", 10.0, minimum=0.01),
        backoff_max_seconds=server.number("backoff_max_seconds", 3600.0, minimum=0.01),
        poll_seconds=server.number("poll_seconds", 2.0, minimum=0.05),
        public_url=server.string("public_url"),
        notify=notify,
        source=path,
        body_timeout_seconds=server.number("body_timeout_seconds", 10.0, minimum=0.1),
        max_connections=int(server.number("max_connections", 200, minimum=2, integer=True)),
        header_timeout_seconds=server.number("header_timeout_seconds", 10.0, minimum=0.1),
        shutdown_timeout_seconds=server.number("shutdown_timeout_seconds", 10.0, minimum=0.1),
        read_token=server.secret("read_token"),
        log_format=_log_format(server),
        min_free_bytes=int(server.number("min_free_bytes", 64 * 1024 * 1024, minimum=0, integer=True)),
        retention_days=_retention(server),
        database_url=database_url,
    )


def _retention(server: _Table) -> float | None:
    """`retention_days = 0` keeps everything; otherwise finished jobs older than that are deleted."""
    days = server.number("retention_days", 90.0, minimum=0)
    return days or None


def _log_format(server: _Table) -> str:
    value = server.string("log_format") or "json"
    if value not in ("json", "text"):
        raise BadInputError(f"{server.where}: `log_format` must be json or text")
    return value


def _registry(name: str, t: _Table) -> RegistryConfig:
    if not _NAME.fullmatch(name):
        raise BadInputError(f"{t.where}: registry name must be letters, digits, '.', '_' or '-'")
    t.only(
        "host",
        "insecure",
        "username",
        "password",
        "password_env",
        "password_file",
        "secret",
        "secret_env",
        "secret_file",
        "secret_header",
        "hmac_secret",
        "hmac_secret_env",
        "hmac_secret_file",
        "hmac_header",
        "watch",
    )
    host = t.string("host")
    if not host or "/" in host or host != host.strip():
        raise BadInputError(f"{t.where}: `host` must be host[:port] of the registry, without a scheme or path")
    reg = RegistryConfig(
        name=name,
        host=host,
        insecure=t.boolean("insecure", False),
        username=t.string("username"),
        password=t.secret("password"),
        secret=t.secret("secret"),
        secret_header=t.string("secret_header") or "Authorization",
        hmac_secret=t.secret("hmac_secret"),
        hmac_header=t.string("hmac_header") or "X-Hub-Signature-256",
        watch=tuple(t.str_list("watch")),
    )
    if any(not p.strip() or p != p.strip() for p in reg.watch):
        raise BadInputError(f'{t.where}: `watch` entries must be repository names or patterns like "team/*"')
    if not reg.secret and not reg.hmac_secret:
        # an unauthenticated webhook lets anyone make the service pull arbitrary repositories
        raise BadInputError(f"{t.where}: set `secret` or `hmac_secret` (or their _env/_file forms)")
    if bool(reg.username) != bool(reg.password):
        raise BadInputError(f"{t.where}: set both `username` and `password`, or neither")
    return reg


class _Table:
    """Typed reads from one TOML table with messages that name the key."""

    def __init__(self, doc: object, where: str, base: str, env: Mapping[str, str]):
        if not isinstance(doc, dict):
            raise BadInputError(f"{where}: expected a table")
        self.doc, self.where, self.base, self.env = doc, where, base, env

    def only(self, *keys: str) -> None:
        unknown = sorted(set(self.doc) - set(keys))
        if unknown:
            raise BadInputError(f"{self.where}: unknown key(s) {', '.join(unknown)}")

    def keys(self) -> list[str]:
        return list(self.doc)

    def raw(self, key: str, default: object = None) -> Any:
        return self.doc.get(key, default)

    def table(self, key: str) -> _Table:
        return _Table(self.doc.get(key, {}), f"{self.where} [{key}]", self.base, self.env)

    def string(self, key: str) -> str | None:
        value = self.doc.get(key)
        if value is not None and not isinstance(value, str):
            raise BadInputError(f"{self.where}: `{key}` must be a string")
        return value or None

    def str_list(self, key: str) -> list[str]:
        value = self.doc.get(key, [])
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise BadInputError(f"{self.where}: `{key}` must be a list of strings")
        return value

    def boolean(self, key: str, default: bool) -> bool:
        value = self.doc.get(key, default)
        if not isinstance(value, bool):
            raise BadInputError(f"{self.where}: `{key}` must be true or false")
        return value

    def number(
        self, key: str, default: float, minimum: float, integer: bool = False, maximum: float | None = None
    ) -> float:
        value = self.doc.get(key, default)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or (integer and not isinstance(value, int)):
            raise BadInputError(f"{self.where}: `{key}` must be {'an integer' if integer else 'a number'}")
        if value < minimum or (maximum is not None and value > maximum):
            bound = f"between {minimum} and {maximum}" if maximum is not None else f"at least {minimum}"
            raise BadInputError(f"{self.where}: `{key}` must be {bound}")
        return float(value)

    def path(self, key: str, required: bool = False) -> str | None:
        value = self.string(key)
        if value is None:
            if required:
                raise BadInputError(f"{self.where}: `{key}` is required")
            return None
        return os.path.normpath(os.path.join(self.base, os.path.expanduser(value)))

    def path_list(self, key: str) -> list[str]:
        return [os.path.normpath(os.path.join(self.base, os.path.expanduser(v))) for v in self.str_list(key)]

    def secret(self, key: str) -> str | None:
        """`key` inline, `key_env` (environment variable name) or `key_file` (path); at most one."""
        given = [k for k in (key, f"{key}_env", f"{key}_file") if k in self.doc]
        if len(given) > 1:
            raise BadInputError(f"{self.where}: set only one of {', '.join(given)}")
        if not given:
            return None
        if given[0] == key:
            return _not_placeholder(self.string(key), f"{self.where}: `{key}`")
        if given[0].endswith("_env"):
            var = self.string(f"{key}_env")
            if not var or not self.env.get(var):
                raise BadInputError(f"{self.where}: environment variable {var} (from `{key}_env`) is not set")
            return _not_placeholder(self.env[var], f"{self.where}: environment variable {var} (from `{key}_env`)")
        path = self.path(f"{key}_file")
        if path is None:  # `key_file` is present (given[0]) but empty
            raise BadInputError(f"{self.where}: `{key}_file` is empty")
        try:
            with open(path, encoding="utf-8") as fh:
                value = fh.read().strip()
        except OSError as exc:
            raise UnavailableError(f"{self.where}: cannot read `{key}_file` {path}: {exc.strerror}") from None
        if not value:
            raise BadInputError(f"{self.where}: `{key}_file` {path} is empty")
        return _not_placeholder(value, f"{self.where}: `{key}_file` {path}")


PLACEHOLDER = "change-me"  # the value every secret has in deploy/*/secret.yaml until someone sets it


def _not_placeholder(value: str | None, where: str) -> str | None:
    """Refuse the example Secret's placeholder: `kubectl apply -k` would otherwise run with it."""
    if value is not None and value.strip().lower() == PLACEHOLDER:
        raise BadInputError(
            f"{where} is still the placeholder {PLACEHOLDER!r} from the example Secret; set a real value"
        )
    return value


def _url_not_placeholder(url: str | None, where: str) -> None:
    """A database URL whose password is the placeholder (postgresql://user:change-me@host/db)."""
    if url:
        try:
            password = urlsplit(url).password
        except ValueError:
            return  # a malformed URL is refused where it is used, with its own message
        _not_placeholder(unquote(password) if password else None, f"{where}: the password")
