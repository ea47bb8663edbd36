"""A reference -> the digest it names now: pinned digest, else the anonymous HEAD, else the client HEAD.

The one place that decides how a reference becomes a content address before any manifest is read,
and says which way it went. The first two ways need no registry client (a warm re-check by tag is
one HEAD over http.client and never imports requests); the client's HEAD, with credentials and
retries, comes last and only from the registry source that owns the client.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .reference import Reference

if TYPE_CHECKING:
    from .read_options import ReadOptions

PINNED = "pinned"  # the reference names its digest (name@sha256:...)
ANONYMOUS_HEAD = "anonymous-head"  # one HEAD over http.client (tag_head.py)
CLIENT_HEAD = "client-head"  # the registry client's HEAD, after its credentials and challenges


@dataclass(frozen=True)
class ResolvedDigest:
    digest: str  # of a manifest or of an index
    via: str  # PINNED, ANONYMOUS_HEAD or CLIENT_HEAD


def without_client(ref: Reference, options: ReadOptions) -> ResolvedDigest | None:
    """The pinned digest, else the tag's digest from one anonymous HEAD; None when the client must ask."""
    if ref.digest:
        return ResolvedDigest(ref.digest, PINNED)
    if options.session is not None:
        return None  # a caller's session sends every request
    import os

    from ..home import imgcheck_home
    from .tag_head import anonymous_tag_digest

    digest = anonymous_tag_digest(
        ref, options.insecure_registries, os.path.join(imgcheck_home(), "cache", "hosts"), deadline=options.deadline
    )
    return ResolvedDigest(digest, ANONYMOUS_HEAD) if digest else None


def with_client(ref: Reference, head_manifest: Callable[[str], str | None]) -> ResolvedDigest | None:
    """What the registry client's HEAD says (None when the registry does not say: it refuses HEAD)."""
    if ref.digest:
        return ResolvedDigest(ref.digest, PINNED)
    digest = head_manifest(ref.reference)
    return ResolvedDigest(digest, CLIENT_HEAD) if digest else None
