"""OCI image layout, as a directory (`oci-dir:`) or a tar of one (`oci-archive:`)."""

from __future__ import annotations

from typing import Any

from .. import safejson
from ..errors import BadInputError
from .base import (
    INDEX_MEDIA_TYPES,
    LayerRef,
    OpenedImage,
    Source,
    VerifyingReader,
    media_type_of,
    parse_digest,
    verify_bytes,
)
from .blobstore import BlobStore, DirStore, TarStore
from .manifest import check_config, config_descriptor, layers_of_manifest, with_diff_ids
from .platform import DEFAULT_PLATFORM, Platform, parse_platform, platform_of_config, select_manifest

REF_NAME = "org.opencontainers.image.ref.name"


def blob_path(digest: str) -> str:
    algo, hexpart = parse_digest(digest)
    return f"blobs/{algo}/{hexpart}"


class OciLayoutSource(Source):
    def __init__(self, store: BlobStore, location: str, ref_name: str | None = None, platform: Platform | None = None):
        self.store = store
        self.location = location
        self.ref_name = ref_name
        self.platform = platform

    @classmethod
    def from_dir(cls, path: str, ref_name: str | None = None, platform: Platform | None = None) -> OciLayoutSource:
        return cls(DirStore(path), f"oci-dir:{path}", ref_name, platform)

    @classmethod
    def from_archive(cls, path: str, ref_name: str | None = None, platform: Platform | None = None) -> OciLayoutSource:
        return cls(TarStore(path), f"oci-archive:{path}", ref_name, platform)

    def _blob_json(self, digest: str, what: str) -> Any:
        data = self.store.read_bytes(blob_path(digest), what)
        verify_bytes(data, digest, what)
        return safejson.loads(data, what)

    def _pick_from_index(self, index: dict[str, Any], where: str) -> dict[str, Any]:
        manifests = index.get("manifests")
        if not isinstance(manifests, list) or not manifests:
            raise BadInputError(f"{where}: index lists no manifests")
        if self.ref_name is not None:
            named = [
                d
                for d in manifests
                if isinstance(d, dict)
                and isinstance(d.get("annotations"), dict)
                and d["annotations"].get(REF_NAME) == self.ref_name
            ]
            if not named:
                raise BadInputError(f"{where}: no manifest named {self.ref_name!r}")
            manifests = named
        if len(manifests) == 1:
            media_type_of(manifests[0], f"{where}: index entry")  # a mediaType that is not a string is bad input
            # a single image (its platform is checked against --platform by the caller), or buildx's one
            # nested index, which open() follows and chooses from
            return manifests[0]
        return select_manifest({"manifests": manifests}, self.platform or parse_platform(DEFAULT_PLATFORM), where)

    def open(self) -> OpenedImage:
        if not self.store.exists("oci-layout"):
            raise BadInputError(f"{self.location}: not an OCI image layout (no oci-layout file)")
        index = self.store.read_json("index.json", f"{self.location}: index.json")
        if not isinstance(index, dict):
            raise BadInputError(f"{self.location}: index.json is not an object")
        desc = self._pick_from_index(index, self.location)
        for _depth in range(4):  # nested indexes (e.g. buildx output) are followed a few levels
            if media_type_of(desc, f"{self.location}: descriptor") not in INDEX_MEDIA_TYPES:
                break
            nested = self._blob_json(desc["digest"], f"{self.location}: nested index")
            desc = select_manifest(nested, self.platform or parse_platform(DEFAULT_PLATFORM), self.location)
        digest = desc.get("digest")
        if not isinstance(digest, str):
            raise BadInputError(f"{self.location}: manifest descriptor has no digest")
        manifest = self._blob_json(digest, f"{self.location}: manifest")
        layers = layers_of_manifest(manifest, self.location)
        config_digest, _ = config_descriptor(manifest, self.location)
        config = check_config(self._blob_json(config_digest, f"{self.location}: config"), self.location)
        return OpenedImage(
            reference=self.location,
            digest=digest,
            platform=platform_of_config(config),
            config=config,
            layers=with_diff_ids(layers, config, self.location),
            opener=self._open_layer,
        )

    def _open_layer(self, layer: LayerRef) -> VerifyingReader:
        raw = self.store.open(blob_path(layer.digest))
        return VerifyingReader(raw, layer.digest, f"layer {layer.digest}", layer.size)

    def close(self) -> None:
        self.store.close()
