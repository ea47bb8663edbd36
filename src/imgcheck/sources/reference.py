"""Docker image references: `[host[:port]/]path[:tag][@digest]`, with Docker Hub's defaults.

The grammar follows distribution's reference package (github.com/distribution/reference,
regexp.go): the first path component is a registry host only if it contains '.' or ':' or is
`localhost`; otherwise the image lives on Docker Hub, where one-component names get `library/`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from ..errors import BadInputError, UsageError
from .base import parse_digest

DOCKER_HUB = "docker.io"
DOCKER_HUB_API = "registry-1.docker.io"  # the host that serves Docker Hub's /v2/ API
_HUB_ALIASES = {"docker.io", "index.docker.io", "registry-1.docker.io"}

_COMPONENT = re.compile(r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*")
_TAG = re.compile(r"[\w][\w.-]{0,127}")
_HOST = re.compile(
    r"(?:(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])(?:\.(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9]))*"
    r"|\[[0-9a-fA-F:.]+\])(?::[0-9]+)?"
)
MAX_NAME = 255


@dataclass(frozen=True)
class Reference:
    registry: str  # as the user knows it: docker.io, nvcr.io, 127.0.0.1:5000
    repository: str  # library/debian, nvidia/pytorch
    tag: str | None = None
    digest: str | None = None

    @property
    def api_host(self) -> str:
        """host[:port] that serves the /v2/ API."""
        return DOCKER_HUB_API if self.registry == DOCKER_HUB else self.registry

    @property
    def hostname(self) -> str:
        """The host without its port (brackets kept off IPv6 literals)."""
        host = self.registry
        if host.startswith("["):
            return host[1 : host.index("]")]
        return host.rsplit(":", 1)[0] if ":" in host else host

    @property
    def name(self) -> str:
        return f"{self.registry}/{self.repository}"

    @property
    def reference(self) -> str:
        """What to put after /manifests/: the digest when pinned, else the tag."""
        return self.digest or self.tag or "latest"

    def __str__(self) -> str:
        text = self.name
        if self.tag:
            text += ":" + self.tag
        if self.digest:
            text += "@" + self.digest
        return text


def parse_reference(text: str) -> Reference:
    """Parse and normalise a reference; a malformed one is a UsageError naming what is wrong."""
    original = text
    if not text or text != text.strip():
        raise UsageError(f"invalid image reference {original!r}: empty or has surrounding spaces")
    if "://" in text:
        raise UsageError(f"invalid image reference {original!r}: write it without a URL scheme")
    digest = None
    if "@" in text:
        text, _, digest = text.partition("@")
        try:
            parse_digest(digest)
        except BadInputError:
            raise UsageError(f"invalid image reference {original!r}: malformed digest {digest!r}") from None
    tag = None
    slash = text.rfind("/")
    colon = text.rfind(":")
    if colon > slash:
        text, tag = text[:colon], text[colon + 1 :]
        if not _TAG.fullmatch(tag):
            raise UsageError(f"invalid image reference {original!r}: malformed tag {tag!r}")
    first, sep, rest = text.partition("/")
    if sep and ("." in first or ":" in first or first == "localhost" or first.startswith("[")):
        registry, path = first, rest
        if not _HOST.fullmatch(registry):
            raise UsageError(f"invalid image reference {original!r}: malformed registry host {registry!r}")
    else:
        registry, path = DOCKER_HUB, text
    if registry.lower() in _HUB_ALIASES:
        registry = DOCKER_HUB
    if not path:
        raise UsageError(f"invalid image reference {original!r}: no repository name")
    for component in path.split("/"):
        if not _COMPONENT.fullmatch(component):
            hint = " (repository names are lower case)" if component.lower() != component else ""
            raise UsageError(f"invalid image reference {original!r}: bad path component {component!r}{hint}")
    if registry == DOCKER_HUB and "/" not in path:
        path = "library/" + path  # Docker Hub's official images
    if len(registry) + 1 + len(path) > MAX_NAME:
        raise UsageError(f"invalid image reference {original!r}: name longer than {MAX_NAME} characters")
    if tag is None and digest is None:
        tag = "latest"
    return Reference(registry=registry, repository=path, tag=tag, digest=digest)


def is_local_host(host: str) -> bool:
    """localhost, 127.0.0.0/8 or ::1 (with or without a port): plain HTTP is allowed there."""
    name = host
    if name.startswith("["):
        name = name[1 : name.find("]")]
    elif name.count(":") == 1:
        name = name.split(":")[0]
    if name == "localhost":
        return True
    import ipaddress  # only for a host that may be an address: not on a warm re-check's import path

    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def strip_port(host: str) -> str:
    if host.startswith("["):
        return host[1 : host.find("]")]
    return host.split(":")[0] if host.count(":") == 1 else host


def insecure_hosts(named: Iterable[str]) -> frozenset[str]:
    """The --insecure-registry values, as may_use_http() compares them."""
    return frozenset(h.strip().lower() for h in named if h.strip())


def may_use_http(host: str, insecure: frozenset[str]) -> bool:
    """Plain HTTP or an unverified certificate is allowed: loopback, or a host the user named."""
    host = host.lower()
    return is_local_host(host) or host in insecure or strip_port(host) in insecure
