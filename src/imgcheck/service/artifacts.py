"""Images vs other artifacts stored in a registry (signatures, attestations, SBOMs, Helm charts).

Registries hold OCI artifacts in ordinary image manifests, so a push notification cannot tell them
apart. A manifest is an image when its config is an image config and every layer is a filesystem
layer (OCI image-spec manifest.md and media-types.md; Docker's image manifest v2 schema 2); an
`artifactType` field marks an artifact outright (image-spec 1.1). cosign's signatures keep an
image config but carry `application/vnd.dev.cosign.simplesigning.v1+json` layers; its attestations
`application/vnd.dsse.envelope.v1+json`; Helm charts `application/vnd.cncf.helm.config.v1+json`.
An index is treated as an image (the image reader picks the platform).
"""

from __future__ import annotations

import json
import re

# cosign's tag scheme for what it attaches to an image: sha256-<hex of the image digest>.sig|.att|.sbom
COSIGN_TAG = re.compile(r"sha256-[0-9a-f]{64}\.(sig|att|sbom)")


class NotAnImage(Exception):
    """The pushed manifest is an artifact: the job is skipped, not failed."""


def is_artifact_tag(tag: str | None) -> bool:
    return bool(tag and COSIGN_TAG.fullmatch(tag))


def _is_layer(media_type: str) -> bool:
    # the standard filesystem layer types, and tar-based variants we do not list (better to try a check
    # than to skip an image silently)
    return media_type in LAYER_TYPES or ".tar" in media_type or "rootfs" in media_type


IMAGE_CONFIG_TYPES = frozenset(
    {"application/vnd.oci.image.config.v1+json", "application/vnd.docker.container.image.v1+json"}
)
LAYER_TYPES = frozenset(
    {
        "application/vnd.oci.image.layer.v1.tar",
        "application/vnd.oci.image.layer.v1.tar+gzip",
        "application/vnd.oci.image.layer.v1.tar+zstd",
        "application/vnd.oci.image.layer.nondistributable.v1.tar",
        "application/vnd.oci.image.layer.nondistributable.v1.tar+gzip",
        "application/vnd.oci.image.layer.nondistributable.v1.tar+zstd",
        "application/vnd.docker.image.rootfs.diff.tar.gzip",
        "application/vnd.docker.image.rootfs.foreign.diff.tar.gzip",
    }
)


def artifact_reason(manifest: bytes) -> str | None:
    """None for an image (or anything we cannot classify: the check then says what is wrong), else why not."""
    try:
        doc = json.loads(manifest)
    except ValueError:
        return None
    if not isinstance(doc, dict) or "manifests" in doc:
        return None
    if isinstance(doc.get("artifactType"), str):
        return f"an OCI artifact of type {doc['artifactType']}, not an image"
    config = doc.get("config")
    config_type = config.get("mediaType") if isinstance(config, dict) else None
    if isinstance(config_type, str) and config_type not in IMAGE_CONFIG_TYPES:
        return f"an artifact with config {config_type}, not an image"
    layers = doc.get("layers")
    if isinstance(layers, list):
        odd = sorted(
            {
                media_type
                for l in layers
                if isinstance(l, dict)
                and isinstance(media_type := l.get("mediaType"), str)
                and not _is_layer(media_type)
            }
        )
        if odd:
            return f"an artifact with {', '.join(odd)} layers (a signature, attestation or SBOM), not an image"
    return None
