"""Webhook authentication: a shared secret header or an HMAC-SHA256 signature of the body.

- Shared secret: distribution sends the static headers of its endpoint config
  (`headers: {Authorization: [Bearer SECRET]}`); Harbor sends its "Auth Header" value as
  `Authorization`, written either as the key alone or `Bearer KEY`. Both forms are accepted.
- HMAC: GitHub-style `X-Hub-Signature-256: sha256=<hex>` over the raw body bytes.

Every comparison goes through hmac.compare_digest so the time taken does not reveal how much of a
guess was right. When both are configured, either one suffices.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
from collections.abc import Mapping

from .config import RegistryConfig


def _secret_matches(given: str | None, secret: str) -> bool:
    if not given:
        return False
    given_b = given.strip().encode("utf-8", "surrogateescape")
    secret_b = secret.encode("utf-8")
    # evaluate both forms every time; no early exit that depends on the header's content
    plain = hmac.compare_digest(given_b, secret_b)
    bearer = hmac.compare_digest(given_b, b"Bearer " + secret_b)
    return plain | bearer


def sign(body: bytes, secret: str) -> str:
    """The header value a sender computes: sha256=<hex of HMAC-SHA256(secret, body)>."""
    return "sha256=" + hmac.new(secret.encode("utf-8"), body, hashlib.sha256).hexdigest()


def _signature_matches(given: str | None, body: bytes, secret: str) -> bool:
    if not given:
        return False
    return hmac.compare_digest(given.strip().encode("ascii", "replace"), sign(body, secret).encode("ascii"))


def read_allowed(token: str | None, headers: Mapping[str, str]) -> bool:
    """GET access when a read token is configured: `Bearer TOKEN`, or HTTP Basic with TOKEN as the
    password (any user name) so a browser can open the page after its login prompt."""
    if not token:
        return True
    given = (headers.get("authorization") or "").strip()
    scheme, _, value = given.partition(" ")
    candidate = value.strip()
    if scheme.lower() == "basic":
        try:
            candidate = base64.b64decode(candidate, validate=True).decode("utf-8").partition(":")[2]
        except (ValueError, UnicodeDecodeError):
            candidate = ""
    elif scheme.lower() != "bearer":
        candidate = ""
    return hmac.compare_digest(candidate.encode("utf-8", "surrogateescape"), token.encode("utf-8"))


def precheck(registry: RegistryConfig, headers: Mapping[str, str]) -> str:
    """What the headers alone say, before any body byte is read.

    "ok": the shared secret matched (the body need not be read to trust the sender);
    "body": an HMAC signature header is present, so the body must be read to verify it;
    "no": neither, answer 401 at once (a stranger cannot make the service buffer an upload).
    """
    if registry.secret and _secret_matches(headers.get(registry.secret_header), registry.secret):
        return "ok"
    if registry.hmac_secret and headers.get(registry.hmac_header):
        return "body"
    return "no"


def authenticate(registry: RegistryConfig, headers: Mapping[str, str], body: bytes) -> bool:
    """True when the request carries the registry's shared secret or a valid body signature.

    `headers` must be case-insensitive (Starlette's Headers is).
    """
    ok = False
    if registry.secret:
        ok |= _secret_matches(headers.get(registry.secret_header), registry.secret)
    if registry.hmac_secret:
        ok |= _signature_matches(headers.get(registry.hmac_header), body, registry.hmac_secret)
    return ok
