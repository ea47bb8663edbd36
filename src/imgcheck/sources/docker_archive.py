"""`docker save` output: manifest.json naming a config and per-layer tars (legacy or OCI blobs)."""

from __future__ import annotations

import hashlib
from typing import Any

from .. import safejson
from ..errors import BadInputError, LimitExceededError
from ..streams import ByteStream
from .base import LayerRef, OpenedImage, Source, VerifyingReader, parse_digest, verify_bytes
from .blobstore import TarStore
from .manifest import MAX_LAYERS, check_config
from .platform import platform_of_config
from .save_stream import SaveStreamReader


class DockerArchiveSource(Source):
    def __init__(self, path: str, tag: str | None = None):
        self.path = path
        self.tag = tag
        self.location = f"docker-archive:{path}"
        self.store = TarStore(path)
        self._layer_paths: dict[str, str] = {}

    def _entry(self, manifest: object) -> dict[str, Any]:
        if not isinstance(manifest, list) or not manifest:
            raise BadInputError(f"{self.location}: manifest.json lists no images")
        entries = [e for e in manifest if isinstance(e, dict)]
        if self.tag:
            tagged = [e for e in entries if isinstance(e.get("RepoTags"), list) and self.tag in e["RepoTags"]]
            if not tagged:
                raise BadInputError(f"{self.location}: no image tagged {self.tag!r}")
            return tagged[0]
        if len(entries) != 1:
            raise BadInputError(f"{self.location}: holds {len(entries)} images; name one as docker-archive:PATH:TAG")
        return entries[0]

    def open(self) -> OpenedImage:
        if not self.store.exists("manifest.json"):
            raise BadInputError(f"{self.location}: not a docker archive (no manifest.json)")
        entry = self._entry(self.store.read_json("manifest.json", f"{self.location}: manifest.json"))
        config_name = entry.get("Config")
        layer_names = entry.get("Layers")
        if not isinstance(config_name, str) or not isinstance(layer_names, list):
            raise BadInputError(f"{self.location}: manifest.json entry lacks Config or Layers")
        if len(layer_names) > MAX_LAYERS:
            raise LimitExceededError(f"{self.location}: {len(layer_names)} layers exceed the limit of {MAX_LAYERS}")
        config_bytes = self.store.read_bytes(config_name, f"{self.location}: config")
        config_digest = "sha256:" + hashlib.sha256(config_bytes).hexdigest()
        if config_name.startswith("blobs/sha256/"):
            verify_bytes(config_bytes, "sha256:" + config_name.rsplit("/", 1)[1], f"{self.location}: config")
        config = check_config(safejson.loads(config_bytes, f"{self.location}: config"), self.location)
        diff_ids = (config.get("rootfs") or {}).get("diff_ids") or []
        if len(diff_ids) != len(layer_names):
            raise BadInputError(
                f"{self.location}: config lists {len(diff_ids)} diff_ids but manifest.json {len(layer_names)} layers"
            )
        layers = []
        for i, (name, diff_id) in enumerate(zip(layer_names, diff_ids)):
            if not isinstance(name, str) or not isinstance(diff_id, str):
                raise BadInputError(f"{self.location}: layer {i} is malformed")
            parse_digest(diff_id)
            if name.startswith("blobs/sha256/"):
                # docker >= 25 writes OCI blobs; their name is the digest of the stored bytes
                digest, of_uncompressed = "sha256:" + name.rsplit("/", 1)[1], False
                parse_digest(digest)
            else:
                digest, of_uncompressed = diff_id, True
            self._layer_paths[f"{i}:{digest}"] = name
            layers.append(
                LayerRef(
                    digest=digest,
                    media_type="layer.tar",
                    size=self.store.size(name),
                    index=i,
                    digest_of_uncompressed=of_uncompressed,
                    diff_id=diff_id,
                )
            )
        return OpenedImage(
            reference=self.location,
            digest=config_digest,  # an archive has no manifest digest; the image ID is the config's
            platform=platform_of_config(config),
            config=config,
            layers=layers,
            opener=self._open_layer,
            # A compressed archive has no offsets: opened one layer at a time, each layer would inflate the
            # archive again from its start (30 layers: 10x the time). It is read in one pass instead.
            save_stream=SaveStreamReader(self.location, self.store.open_whole, config_digest, layers)
            if self.store.compressed
            else None,
        )

    def _open_layer(self, layer: LayerRef) -> ByteStream:
        raw = self.store.open(self._layer_paths[f"{layer.index}:{layer.digest}"])
        if layer.digest_of_uncompressed:
            return raw  # verified after decompression against the diff_id, see view/layer_index.py
        return VerifyingReader(raw, layer.digest, f"layer {layer.digest}", layer.size)

    def close(self) -> None:
        self.store.close()
