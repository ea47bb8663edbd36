"""A SOCI index (index manifest v2) tied to a registry image: which zTOC indexes each layer (issue 39).

SOCI (github.com/awslabs/soci-snapshotter at 77fb4266, soci/soci_index.go, docs/soci-index-manifest-v2.md): a SOCI
index is an OCI image manifest whose config media type is `application/vnd.amazon.soci.index.v2+json` (v1:
`...index.v1+json`) and whose layers are zTOC blobs (`application/octet-stream`), each annotated with the image
layer it indexes (`com.amazon.soci.image-layer-digest`); prefetch artifacts are listed there too and skipped. Index
manifest v2, the default since v0.10, is named by the image manifest's own annotation `com.amazon.soci.index-digest`
(soci/soci_convert.go writes it; fs/fs.go reads it): the link is covered by the image manifest's digest. v1 indexes
are found only through the referrers API (distribution-spec v1.1: GET /v2/<name>/referrers/<digest>, or the
referrers tag schema `<alg>-<hex>` on registries without it), a link anyone who can push may add, which upstream
turns off by default. One is used here only as far as it verifies: its manifest is fetched by digest, its `subject`
must be this image manifest's digest, its config media type v1's, each zTOC the digest it lists, each span of the
layer the zTOC's span digest, and each wanted file's tar header the zTOC's member (view/soci.py); anything else
reads the layer whole. Looked for only when a gzip layer of at least SOCI_MIN_LAYER bytes is to be read (upstream
builds no zTOC for smaller layers), once per process.
SOCI skips layers under its minimum size (10 MiB by default), so a layer without a zTOC is ordinary, not an error.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from .. import safejson
from ..errors import BadInputError, UnavailableError
from .base import LayerRef, parse_digest
from .manifest import digest_annotation

INDEX_DIGEST_ANNOTATION = "com.amazon.soci.index-digest"
V1_TYPE = "application/vnd.amazon.soci.index.v1+json"
INDEX_CONFIG_TYPES = ("application/vnd.amazon.soci.index.v2+json", V1_TYPE)
SOCI_MIN_LAYER = 10 * 1024**2  # soci create --min-layer-size default (cmd/soci/commands/create.go)
ZTOC_MEDIA_TYPE = "application/octet-stream"
LAYER_DIGEST_ANNOTATION = "com.amazon.soci.image-layer-digest"
MAX_ZTOC_BYTES = 256 * 1024**2  # ~32 KiB per checkpoint (one per 4 MiB span by default) plus ~200 bytes a member


def index_digest(manifest: dict[str, Any]) -> str | None:
    """The SOCI index an image manifest names (v2), or None (none, or a malformed value: read as ordinary)."""
    annotations = manifest.get("annotations")
    return digest_annotation(annotations, INDEX_DIGEST_ANNOTATION) if isinstance(annotations, dict) else None


def ztoc_refs(index_manifest: dict[str, Any]) -> dict[str, tuple[str, int]]:
    """{image layer digest: (zTOC digest, size)} from a SOCI index manifest; BadInputError when it is none."""
    config = index_manifest.get("config")
    media_type = config.get("mediaType") if isinstance(config, dict) else None
    if media_type not in INDEX_CONFIG_TYPES:
        raise BadInputError(f"the SOCI index's config media type {str(media_type)[:80]!r} is not a SOCI index's")
    layers = index_manifest.get("layers")
    if not isinstance(layers, list):
        raise BadInputError("the SOCI index lists no zTOCs")
    out: dict[str, tuple[str, int]] = {}
    for desc in layers:
        if not isinstance(desc, dict) or desc.get("mediaType") != ZTOC_MEDIA_TYPE:
            continue  # prefetch artifacts (application/vnd.amazon.soci.prefetch.v1+json) are not zTOCs
        annotations = desc.get("annotations")
        layer = annotations.get(LAYER_DIGEST_ANNOTATION) if isinstance(annotations, dict) else None
        digest, size = desc.get("digest"), desc.get("size")
        if not isinstance(layer, str) or not isinstance(digest, str) or not isinstance(size, int) or size < 0:
            raise BadInputError("a zTOC descriptor lacks its layer digest, digest or size")
        parse_digest(layer)
        parse_digest(digest)
        out[layer] = (digest, size)
    return out


class SociIndex:
    """The zTOCs of one image's SOCI index, the index manifest fetched on first use (once, behind a lock)."""

    def __init__(
        self,
        digest: str,
        get_manifest: Callable[[str], bytes],
        get_blob: Callable[[str, int, int, str], bytes],
        subject: str | None = None,
    ):
        """`subject`: for a v1 index found as a referrer, the image manifest digest its `subject` must name."""
        self.digest = digest
        self.subject = subject
        self._get_manifest, self._get_blob = get_manifest, get_blob
        self._refs: dict[str, tuple[str, int]] | None = None
        self._failed: Exception | None = None  # the index could not be read: every layer is read whole, one reason
        self._lock = threading.Lock()

    def ztoc(self, layer: LayerRef) -> bytes | None:
        """The layer's zTOC blob verified against the digest and size the index names; None when the index has no
        zTOC for it; BadInputError / UnavailableError when the index or the zTOC cannot be read or does not verify."""
        with self._lock:
            if self._failed is not None:
                raise self._failed
            if self._refs is None:
                try:
                    doc = safejson.loads(self._get_manifest(self.digest), f"SOCI index {self.digest}", BadInputError)
                    if not isinstance(doc, dict):
                        raise BadInputError(f"SOCI index {self.digest} is not a JSON object")
                    if self.subject is not None:
                        check_v1_subject(doc, self.subject, self.digest)
                    self._refs = ztoc_refs(doc)
                except (BadInputError, UnavailableError) as exc:
                    self._failed = exc
                    raise
            refs = self._refs
        ref = refs.get(layer.digest)
        if ref is None:
            return None
        digest, size = ref
        if size > MAX_ZTOC_BYTES:
            raise BadInputError(f"the zTOC {digest} is {size} bytes, over {MAX_ZTOC_BYTES}")
        return self._get_blob(digest, size, MAX_ZTOC_BYTES, f"zTOC {digest}")


def check_v1_subject(doc: dict[str, Any], image_digest: str, digest: str) -> None:
    """A SOCI index v1 found as a referrer must be a v1 index whose `subject` is this image manifest."""
    config = doc.get("config")
    if not isinstance(config, dict) or config.get("mediaType") != V1_TYPE:
        raise BadInputError(f"the referrer {digest} is not a SOCI index v1")
    subject = doc.get("subject")
    named = subject.get("digest") if isinstance(subject, dict) else None
    if named != image_digest:
        raise BadInputError(f"the SOCI index {digest} names {str(named)[:80]!r} as its image, not {image_digest}")


def v1_index_digests(listing: bytes) -> list[str]:
    """The SOCI index v1 manifests an OCI index of referrers lists (artifactType), in its order."""
    doc = safejson.loads(listing, "referrers", BadInputError)
    manifests = doc.get("manifests") if isinstance(doc, dict) else None
    found = []
    for desc in manifests if isinstance(manifests, list) else []:
        if isinstance(desc, dict) and desc.get("artifactType") == V1_TYPE and isinstance(desc.get("digest"), str):
            try:
                parse_digest(desc["digest"])
            except BadInputError:
                continue
            found.append(desc["digest"])
    return found


class SociReferrers:
    """A SOCI index v1 among an image manifest's referrers, looked for on the first large gzip layer (once)."""

    def __init__(
        self,
        image_digest: str,
        get_referrers: Callable[[str, str], bytes | None],
        get_manifest: Callable[[str], bytes],
        get_blob: Callable[[str, int, int, str], bytes],
    ):
        self.image_digest = image_digest
        self._get_referrers, self._get_manifest, self._get_blob = get_referrers, get_manifest, get_blob
        self._looked = False
        self._index: SociIndex | None = None
        self._lock = threading.Lock()

    def ztoc(self, layer: LayerRef) -> bytes | None:
        if (layer.size or 0) < SOCI_MIN_LAYER:
            return None
        with self._lock:
            if not self._looked:
                self._looked = True
                try:
                    listing = self._get_referrers(self.image_digest, V1_TYPE)
                    found = v1_index_digests(listing) if listing else []
                except (BadInputError, UnavailableError):
                    found = []  # no referrers to be had: the layers are read as any other
                if found:  # the first listed; one that does not verify reads the layers whole, with a note
                    self._index = SociIndex(found[0], self._get_manifest, self._get_blob, subject=self.image_digest)
        return self._index.ztoc(layer) if self._index is not None else None
