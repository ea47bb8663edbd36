"""Validation of image manifests and configs, shared by every source."""

from __future__ import annotations

from typing import Any

from ..errors import BadInputError, LimitExceededError
from .base import (
    DOCKER_LAYER_GZIP,
    INDEX_MEDIA_TYPES,
    LAYER_MEDIA_TYPES,
    MANIFEST_MEDIA_TYPES,
    OCI_LAYER_GZIP,
    OCI_LAYER_ZSTD,
    LayerRef,
    media_type_of,
    parse_digest,
)

# eStargz (github.com/containerd/stargz-snapshotter, estargz/types.go TOCJSONDigestAnnotation)
ESTARGZ_TOC_DIGEST = "containerd.io/snapshot/stargz/toc.digest"
# zstd:chunked (github.com/containers/storage, pkg/chunked/internal/minimal/compression.go ManifestChecksumKey,
# ManifestInfoKey): (TOC digest, TOC position) annotation keys. Before containers/storage v1.44.0 (commit f98fa39,
# "chunked: use io.github.containers") the keys were `io.containers.zstd-chunked.*`, with the same TOC and position
# layout (v1.43.0 pkg/chunked/internal/compression.go); Debian bookworm's skopeo 1.9 still writes those.
ZSTD_CHUNKED_KEYS = (
    ("io.github.containers.zstd-chunked.manifest-checksum", "io.github.containers.zstd-chunked.manifest-position"),
    ("io.containers.zstd-chunked.manifest-checksum", "io.containers.zstd-chunked.manifest-position"),
)

MAX_LAYERS = 512  # the OCI/Docker practical limit is 127; anything far above is hostile


def layers_of_manifest(manifest: dict[str, Any], where: str, max_layers: int = MAX_LAYERS) -> list[LayerRef]:
    if not isinstance(manifest, dict):
        raise BadInputError(f"{where}: manifest is not a JSON object")
    media_type = media_type_of(manifest, f"{where}: manifest")
    if media_type in INDEX_MEDIA_TYPES:
        raise BadInputError(f"{where}: expected an image manifest, got an index")
    if media_type is not None and media_type not in MANIFEST_MEDIA_TYPES:
        raise BadInputError(f"{where}: unknown manifest media type {media_type!r}")
    layers = manifest.get("layers")
    if not isinstance(layers, list):
        raise BadInputError(f"{where}: manifest has no 'layers' list")
    if len(layers) > max_layers:
        raise LimitExceededError(f"{where}: {len(layers)} layers exceed the limit of {max_layers}")
    refs = []
    for i, desc in enumerate(layers):
        if not isinstance(desc, dict):
            raise BadInputError(f"{where}: layer {i} is not an object")
        mt = media_type_of(desc, f"{where}: layer {i}")
        if mt not in LAYER_MEDIA_TYPES:
            raise BadInputError(f"{where}: layer {i} has unknown media type {mt!r}")
        digest = desc.get("digest")
        if not isinstance(digest, str):
            raise BadInputError(f"{where}: layer {i} has no digest")
        parse_digest(digest)
        size = desc.get("size")
        if size is not None and (not isinstance(size, int) or isinstance(size, bool) or size < 0):
            raise BadInputError(f"{where}: layer {i} has an invalid size {size!r}")
        toc_digest, toc_position = _toc(desc, mt)
        refs.append(
            LayerRef(digest=digest, media_type=mt, size=size, index=i, toc_digest=toc_digest, toc_position=toc_position)
        )
    return refs


def _toc(desc: dict[str, Any], media_type: str) -> tuple[str | None, str | None]:
    """(TOC digest, TOC position) of a seekable layer from its annotations: eStargz for a gzip layer (no position),
    zstd:chunked for a zstd one; (None, None) when neither or malformed (an ordinary layer, read whole)."""
    annotations = desc.get("annotations")
    if not isinstance(annotations, dict):
        return None, None
    if media_type in (OCI_LAYER_GZIP, DOCKER_LAYER_GZIP):
        return digest_annotation(annotations, ESTARGZ_TOC_DIGEST), None
    if media_type == OCI_LAYER_ZSTD:
        for digest_key, position_key in ZSTD_CHUNKED_KEYS:
            digest, position = digest_annotation(annotations, digest_key), annotations.get(position_key)
            if digest is not None and isinstance(position, str):
                return digest, position  # the position is parsed where it is used (view/zstdchunked.py)
    return None, None


def digest_annotation(annotations: dict[str, Any], key: str) -> str | None:
    value = annotations.get(key)
    if not isinstance(value, str):
        return None
    try:
        parse_digest(value)
    except BadInputError:
        return None  # a layer with a malformed annotation is still an ordinary layer
    return value


def config_descriptor(manifest: dict[str, Any], where: str) -> tuple[str, int | None]:
    desc = manifest.get("config")
    if not isinstance(desc, dict) or not isinstance(desc.get("digest"), str):
        raise BadInputError(f"{where}: manifest has no config descriptor")
    parse_digest(desc["digest"])
    size = desc.get("size")
    return desc["digest"], size if isinstance(size, int) and not isinstance(size, bool) else None


def with_diff_ids(layers: list[LayerRef], config: dict[str, Any], where: str) -> list[LayerRef]:
    """Attach each layer's diff_id from the config; the counts must agree."""
    import dataclasses

    diff_ids = (config.get("rootfs") or {}).get("diff_ids")
    if not isinstance(diff_ids, list) or len(diff_ids) != len(layers):
        raise BadInputError(
            f"{where}: config lists {len(diff_ids) if isinstance(diff_ids, list) else 'no'} "
            f"diff_ids for {len(layers)} layers"
        )
    for d in diff_ids:
        if not isinstance(d, str):
            raise BadInputError(f"{where}: config diff_id {d!r} is not a string")
        parse_digest(d)
    return [dataclasses.replace(layer, diff_id=d) for layer, d in zip(layers, diff_ids)]


def check_config(config: object, where: str) -> dict[str, Any]:
    if not isinstance(config, dict):
        raise BadInputError(f"{where}: image config is not a JSON object")
    rootfs = config.get("rootfs")
    if rootfs is not None and not isinstance(rootfs, dict):
        raise BadInputError(f"{where}: image config 'rootfs' is not an object")
    return config


def env_of_config(config: dict[str, Any]) -> dict[str, str]:
    """The image's Env as a dict; later duplicates win, as in a container's environment."""
    inner = config.get("config") or config.get("container_config") or {}
    env = inner.get("Env") if isinstance(inner, dict) else None
    result: dict[str, str] = {}
    if isinstance(env, list):
        for item in env:
            if isinstance(item, str):
                name, sep, value = item.partition("=")
                if name:
                    result[name] = value if sep else ""
    return result
