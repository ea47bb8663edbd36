"""Registry push notifications -> the manifest digests to check.

Two payload shapes:
- CNCF distribution (Debian's docker-registry, Docker's registry:2, GitLab, ...): the envelope
  `{"events": [...]}` (distribution docs/content/about/notifications.md). Current distribution
  labels it application/vnd.docker.distribution.events.v2+json; docker-registry 2.8 (Debian
  bookworm) sends ...events.v1+json with the same shape, so the Content-Type is not checked. Only `push` events whose target is a manifest
  or index with a digest are kept; pulls, deletes, mounts and blob pushes are ignored.
- Harbor's "Default" payload format, `{"type": "PUSH_ARTIFACT", "event_data": {"resources": [...],
  "repository": {"repo_full_name": ...}}}` (goharbor/harbor src/pkg/notifier/model/event.go). For
  robot-account, proxy-cache and by-digest pushes Harbor writes the digest into `tag` (its own
  documented example: https://goharbor.io/docs/edge/working-with-projects/project-configuration/configure-webhooks/,
  "Artifact pushed"): such a `tag` is no tag at all and is dropped, not refused.
- GitHub (GHCR): the event name is in the `X-GitHub-Event` header, not the body. `ping` (sent when a
  hook is created) is answered, not queued; `package` / `registry_package` events with action
  `published` for a container package become a push of OWNER/NAME (lower-cased, as ghcr.io names
  are) at `package_version.container_metadata.tag.digest` (or `package_version.version`, which is
  the digest for containers). Field names from GitHub's webhook schema (github/rest-api-description,
  webhook-package-published); every other GitHub event is ignored.

A body that is not one of these, or a push that names a malformed digest or repository, is
malformed: the request is refused as a whole so nothing half-accepted reaches the queue. URLs and
hosts inside payloads are never used: the registry is the one configured for the endpoint.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from typing import Any

from ..errors import BadInputError
from .artifacts import is_artifact_tag

ENVELOPE_MEDIA_TYPE = "application/vnd.docker.distribution.events.v2+json"

MANIFEST_MEDIA_TYPES = frozenset(
    {
        "application/vnd.oci.image.manifest.v1+json",
        "application/vnd.oci.image.index.v1+json",
        "application/vnd.docker.distribution.manifest.v2+json",
        "application/vnd.docker.distribution.manifest.list.v2+json",
    }
)

_DIGEST = re.compile(r"sha256:[0-9a-f]{64}|sha512:[0-9a-f]{128}")
# distribution/reference: path components separated by '/'
_COMPONENT = r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*"
_REPOSITORY = re.compile(rf"{_COMPONENT}(?:/{_COMPONENT})*")
# distribution/reference regexp.go: tag = `[\w][\w.-]{0,127}` in Go's RE2, where \w is ASCII only
_TAG = re.compile(r"[\w][\w.-]{0,127}", re.ASCII)
MAX_REPOSITORY = 255


class MalformedPayload(BadInputError):
    """The body is not a notification we understand (answered with 400)."""


@dataclass(frozen=True)
class PushEvent:
    repository: str
    digest: str
    tag: str | None = None
    event_id: str | None = None  # the sender's id, to recognise redeliveries


@dataclass(frozen=True)
class Delivery:
    kind: str  # distribution | harbor | github
    pushes: tuple[PushEvent, ...]
    ignored: int  # events that are not manifest pushes
    ping: bool = False  # a sender's connectivity test (GitHub `ping`): answer 200, queue nothing


def _load_json(body: bytes) -> object:
    try:
        doc = json.loads(body)
    except RecursionError:  # deeply nested arrays/objects: Python's parser gives up, we refuse
        raise MalformedPayload("body is nested too deeply") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise MalformedPayload(f"body is not JSON ({exc})") from None
    try:
        # a "\ud800" escape decodes to a lone surrogate, which cannot be stored (SQLite text is UTF-8)
        json.dumps(doc, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        raise MalformedPayload("body contains a lone UTF-16 surrogate escape") from None
    except RecursionError:
        raise MalformedPayload("body is nested too deeply") from None
    return doc


def parse_body(body: bytes, github_event: str | None = None, github_delivery: str | None = None) -> Delivery:
    """`github_event`/`github_delivery`: the X-GitHub-Event and X-GitHub-Delivery headers (GitHub
    names the event there). A GitHub event's id is its body's sha256, not the delivery GUID: a
    redelivery repeats the body, and a replay cannot change it without breaking the signature."""
    doc = _load_json(body)
    if github_event:
        # the X-GitHub-Delivery header is not covered by the signature (X-Hub-Signature-256 signs the
        # body): a captured body replayed with a fresh GUID must still be the same event
        body_id = hashlib.sha256(body).hexdigest()
        return parse_github(doc, github_event.strip(), body_id)
    if isinstance(doc, dict) and "events" in doc:
        return parse_distribution(doc)
    if isinstance(doc, dict) and "type" in doc and "event_data" in doc:
        return parse_harbor(doc)
    raise MalformedPayload('expected a distribution envelope {"events": [...]} or a Harbor event')


def parse_distribution(doc: dict[str, Any]) -> Delivery:
    events = doc.get("events")
    if not isinstance(events, list):
        raise MalformedPayload("`events` must be a list")
    pushes: list[PushEvent] = []
    ignored = 0
    for i, event in enumerate(events):
        where = f"events[{i}]"
        if not isinstance(event, dict):
            raise MalformedPayload(f"{where}: expected an object")
        target = event.get("target")
        if event.get("action") != "push" or not isinstance(target, dict):
            ignored += 1
            continue
        if target.get("mediaType") not in MANIFEST_MEDIA_TYPES or not target.get("digest"):
            ignored += 1  # blob (layer/config) pushes, or a manifest push without a digest
            continue
        if isinstance(target.get("tag"), str) and is_artifact_tag(target["tag"]):
            ignored += 1  # a cosign signature/attestation/SBOM pushed beside an image
            continue
        event_id = event.get("id")
        if event_id is not None and not isinstance(event_id, str):
            raise MalformedPayload(f"{where}: `id` must be a string")
        pushes.append(
            PushEvent(
                repository=_repository(target.get("repository"), where),
                digest=_digest(target.get("digest"), where),
                tag=_tag(target.get("tag"), where),
                event_id=event_id or None,
            )
        )
    return Delivery(kind="distribution", pushes=tuple(pushes), ignored=ignored)


def parse_harbor(doc: dict[str, Any]) -> Delivery:
    if not isinstance(doc.get("type"), str):
        raise MalformedPayload("Harbor event: `type` must be a string")
    if doc["type"] != "PUSH_ARTIFACT":
        return Delivery(kind="harbor", pushes=(), ignored=1)
    data = doc.get("event_data")
    if not isinstance(data, dict):
        raise MalformedPayload("Harbor event: `event_data` must be an object")
    repo = data.get("repository")
    resources = data.get("resources")
    if not isinstance(repo, dict) or not isinstance(resources, list):
        raise MalformedPayload("Harbor event: `event_data` needs `repository` and `resources`")
    name = repo.get("repo_full_name")
    if not name and isinstance(repo.get("namespace"), str) and isinstance(repo.get("name"), str):
        name = f"{repo['namespace']}/{repo['name']}"
    repository = _repository(name, "Harbor event_data.repository")
    pushes = []
    for i, res in enumerate(resources):
        where = f"Harbor event_data.resources[{i}]"
        if not isinstance(res, dict):
            raise MalformedPayload(f"{where}: expected an object")
        # Harbor has no per-event id; the occur_at timestamp + digest identifies a delivery
        occur = doc.get("occur_at")
        digest = _digest(res.get("digest"), where)
        event_id = f"harbor:{occur}:{repository}@{digest}" if isinstance(occur, (int, str)) else None
        tag = res.get("tag")
        if isinstance(tag, str) and _DIGEST.fullmatch(tag):
            tag = None  # Harbor's by-digest / robot / proxy-cache pushes put the digest here
        pushes.append(PushEvent(repository=repository, digest=digest, tag=_tag(tag, where), event_id=event_id))
    return Delivery(kind="harbor", pushes=tuple(pushes), ignored=0)


GITHUB_PACKAGE_EVENTS = ("package", "registry_package")


def parse_github(doc: object, event: str, body_id: str | None = None) -> Delivery:
    if event == "ping":
        return Delivery(kind="github", pushes=(), ignored=0, ping=True)
    if event not in GITHUB_PACKAGE_EVENTS:
        return Delivery(kind="github", pushes=(), ignored=1)
    if not isinstance(doc, dict):
        raise MalformedPayload(f"GitHub {event} event: expected an object")
    package = doc.get(event)  # the payload key is the event name: `package` or `registry_package`
    if not isinstance(package, dict):
        raise MalformedPayload(f"GitHub {event} event: `{event}` must be an object")
    ptype = package.get("package_type")
    if doc.get("action") != "published" or not isinstance(ptype, str) or ptype.lower() not in ("container", "docker"):
        return Delivery(kind="github", pushes=(), ignored=1)  # npm, maven, ... or an `updated` action
    owner = package.get("namespace")
    if not isinstance(owner, str) and isinstance(package.get("owner"), dict):
        owner = package["owner"].get("login")
    name = package.get("name")
    where = f"GitHub {event} event"
    if not isinstance(owner, str) or not isinstance(name, str):
        raise MalformedPayload(f"{where}: needs the package's `namespace` (or owner.login) and `name`")
    repository = _repository(f"{owner}/{name}".lower(), where)
    version = package.get("package_version")
    if not isinstance(version, dict):
        raise MalformedPayload(f"{where}: `package_version` must be an object")
    meta = version.get("container_metadata")
    tag_info = meta.get("tag") if isinstance(meta, dict) else None
    tag_info = tag_info if isinstance(tag_info, dict) else {}
    digest = tag_info.get("digest") or version.get("version")
    tag = tag_info.get("name") or None
    return Delivery(
        kind="github",
        ignored=0,
        pushes=(
            PushEvent(
                repository=repository,
                digest=_digest(digest, where),
                tag=_tag(tag, where),
                event_id=f"github:{body_id}" if body_id else None,
            ),
        ),
    )


def _repository(value: object, where: str) -> str:
    if not isinstance(value, str) or len(value) > MAX_REPOSITORY or not _REPOSITORY.fullmatch(value):
        raise MalformedPayload(f"{where}: malformed repository name {value!r}")
    return value


def _digest(value: object, where: str) -> str:
    if not isinstance(value, str) or not _DIGEST.fullmatch(value):
        raise MalformedPayload(f"{where}: malformed digest {value!r}")
    return value


def _tag(value: object, where: str) -> str | None:
    if value in (None, ""):
        return None
    if not isinstance(value, str) or not _TAG.fullmatch(value):
        raise MalformedPayload(f"{where}: malformed tag {value!r}")
    return value


def is_digest(value: str) -> bool:
    return bool(_DIGEST.fullmatch(value))


def is_repository(value: str) -> bool:
    return len(value) <= MAX_REPOSITORY and bool(_REPOSITORY.fullmatch(value))
