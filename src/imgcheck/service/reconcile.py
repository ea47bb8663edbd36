"""Reconcile on start: pushes made while the service was down are found in the registry and queued.

Distribution keeps undelivered notifications in memory only, so a push during a service outage
(or a registry restart) is never announced. At start the service lists, for each registry with a
`watch` list, the matching repositories (`GET /v2/_catalog` when a pattern has a wildcard) and
their tags (`GET /v2/<name>/tags/list`), resolves each tag to its manifest digest (`HEAD
/v2/<name>/manifests/<tag>`, Docker-Content-Digest) and enqueues it like a push. Store.enqueue
deduplicates on registry + repository@digest, so digests already checked only gain their tag.
Both list endpoints are paginated with `n` and a Link rel="next" header (OCI distribution spec,
"Listing Tags"; distribution docs/content/spec/api.md "Catalog").

cosign's signature, attestation and SBOM tags (`sha256-<hex>.sig|.att|.sbom`) name artifacts,
not images, and are not queued.
"""

from __future__ import annotations

import fnmatch
import logging
import time
from typing import TYPE_CHECKING
from urllib.parse import urljoin

from ..errors import ImgcheckError, UnavailableError
from .artifacts import is_artifact_tag
from .config import RegistryConfig, ServiceConfig
from .events import PushEvent, is_digest, is_repository

if TYPE_CHECKING:
    from ..sources.registry import RegistryClient
    from .storage import JobStore

log = logging.getLogger("imgcheck.service")

PAGE = 1000
MAX_PAGES = 100  # 100k repositories or tags per list is far beyond any registry we expect


def _client(reg: RegistryConfig, repository: str) -> RegistryClient:
    from ..sources.reference import Reference
    from ..sources.registry import RegistryClient

    return RegistryClient(
        Reference(registry=reg.host, repository=repository), insecure_registries=[reg.host] if reg.insecure else []
    )


def _pages(client: RegistryClient, path: str, scope: str, key: str) -> list[str]:
    """Every string in `key` across the pages of a paginated /v2 list."""
    url = f"{client.base()}{path}"
    out: list[str] = []
    for _ in range(MAX_PAGES):
        resp = client.http.send("GET", url, headers=client.auth.headers(), verify=client.verify)
        if resp.status_code == 401:
            resp.close()
            if client.auth.answer(resp, scope):
                resp = client.http.send("GET", url, headers=client.auth.headers(), verify=client.verify)
        if resp.status_code != 200:
            raise client.fail(resp, path)
        try:
            values = resp.json().get(key) or []
        except (ValueError, AttributeError) as exc:  # the cause says where the answer stopped being a list
            raise UnavailableError(f"{client.host}: {path} did not answer a JSON list") from exc
        out.extend(v for v in values if isinstance(v, str))
        following = resp.links.get("next", {}).get("url")
        resp.close()
        if not following:
            return out
        url = urljoin(url, following)
    log.warning("%s: %s has more than %d pages; the rest is not reconciled", client.host, path, MAX_PAGES)
    return out


def watched_repositories(reg: RegistryConfig) -> list[str]:
    literal = [p for p in reg.watch if not any(c in p for c in "*?[")]
    patterns = [p for p in reg.watch if p not in literal]
    found = set(literal)
    if patterns:
        client = _client(reg, "_catalog")
        try:
            names = _pages(client, f"/v2/_catalog?n={PAGE}", "registry:catalog:*", "repositories")
        finally:
            client.close()
        found.update(n for n in names if is_repository(n) and any(fnmatch.fnmatchcase(n, p) for p in patterns))
    return sorted(found)


def repository_pushes(reg: RegistryConfig, repository: str) -> list[PushEvent]:
    client = _client(reg, repository)
    try:
        tags = _pages(client, f"/v2/{repository}/tags/list?n={PAGE}", f"repository:{repository}:pull", "tags")
        pushes = []
        for tag in tags:
            if is_artifact_tag(tag):
                continue
            digest = client.head_manifest(tag)
            if digest and is_digest(digest):
                pushes.append(PushEvent(repository=repository, digest=digest, tag=tag))
        return pushes
    finally:
        client.close()


def reconcile(config: ServiceConfig, store: JobStore) -> int:
    """Queue what the watched repositories hold; returns how many new jobs were queued."""
    queued = 0
    for reg in config.registries.values():
        if not reg.watch:
            continue
        started = time.monotonic()
        try:
            repositories = watched_repositories(reg)
        except ImgcheckError as exc:
            log.warning(
                "reconcile of %s: cannot list repositories: %s",
                reg.name,
                exc,
                extra={"event": "registry.unavailable", "registry": reg.name, "error": str(exc)},
            )
            continue
        found = reg_queued = 0
        for repository in repositories:
            try:
                pushes = repository_pushes(reg, repository)
            except ImgcheckError as exc:
                log.warning(
                    "reconcile of %s/%s failed: %s",
                    reg.name,
                    repository,
                    exc,
                    extra={
                        "event": "registry.unavailable",
                        "registry": reg.name,
                        "repository": repository,
                        "error": str(exc),
                    },
                )
                continue
            found += len(pushes)
            if pushes:
                reg_queued += store.enqueue(reg.name, pushes).queued
        log.info(
            "reconciled %s: %d repositories, %d tags, %d new job(s)",
            reg.name,
            len(repositories),
            found,
            reg_queued,
            extra={
                "event": "reconcile.done",
                "registry": reg.name,
                "count": found,
                "queued": reg_queued,
                "seconds": round(time.monotonic() - started, 3),
            },
        )
        queued += reg_queued
    return queued
