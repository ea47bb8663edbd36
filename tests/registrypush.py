"""Push images to a test registry with plain requests: monolithic blob upload and manifest PUT.

(OCI distribution spec, "Pushing blobs": POST /v2/<name>/blobs/uploads/ then PUT <location>?digest=.)
"""

from __future__ import annotations

import hashlib
import json
import os
from typing import BinaryIO

import requests
from imagebuild import BuiltImage, sha256

OCI_INDEX = "application/vnd.oci.image.index.v1+json"
OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json"


class Pusher:
    """`auth`: (user, password) for a Basic registry, or a callable scope -> bearer token."""

    def __init__(self, base_url: str, auth=None, verify: bool = True):
        self.base = base_url.rstrip("/")
        self.session = requests.Session()
        self.auth = auth
        self.verify = verify  # per request: REQUESTS_CA_BUNDLE in the environment overrides a session's

    def _headers(self, repo: str) -> dict:
        if callable(self.auth):
            return {"Authorization": "Bearer " + self.auth(f"repository:{repo}:pull,push")}
        return {}

    def _kw(self, repo: str) -> dict:
        kw: dict = {"headers": self._headers(repo), "timeout": 120, "verify": self.verify}
        if isinstance(self.auth, tuple):
            kw["auth"] = self.auth
        return kw

    def has_blob(self, repo: str, digest: str) -> bool:
        return self.session.head(f"{self.base}/v2/{repo}/blobs/{digest}", **self._kw(repo)).status_code == 200

    def push_blob(self, repo: str, data: bytes | BinaryIO, digest: str | None = None) -> str:
        if digest is None:
            assert isinstance(data, bytes)
            digest = sha256(data)
        if self.has_blob(repo, digest):
            return digest
        kw = self._kw(repo)
        resp = self.session.post(f"{self.base}/v2/{repo}/blobs/uploads/", **kw)
        assert resp.status_code == 202, (resp.status_code, resp.text)
        location = resp.headers["Location"]
        if location.startswith("/"):
            location = self.base + location
        sep = "&" if "?" in location else "?"
        kw["headers"] = {**kw["headers"], "Content-Type": "application/octet-stream"}
        resp = self.session.put(f"{location}{sep}digest={digest}", data=data, **kw)
        assert resp.status_code == 201, (resp.status_code, resp.text)
        return digest

    def push_file_blob(self, repo: str, path: str) -> str:
        h = hashlib.sha256()
        with open(path, "rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                h.update(chunk)
        digest = "sha256:" + h.hexdigest()
        with open(path, "rb") as fh:
            return self.push_blob(repo, fh, digest)

    def push_manifest(self, repo: str, ref: str, data: bytes, media_type: str) -> str:
        kw = self._kw(repo)
        kw["headers"] = {**kw["headers"], "Content-Type": media_type}
        resp = self.session.put(f"{self.base}/v2/{repo}/manifests/{ref}", data=data, **kw)
        assert resp.status_code == 201, (resp.status_code, resp.text)
        return sha256(data)

    def push_image(self, repo: str, tag: str | None, image: BuiltImage) -> str:
        for digest, blob in image.blobs.items():
            self.push_blob(repo, blob, digest)
        return self.push_manifest(repo, tag or image.manifest_digest, image.manifest, OCI_MANIFEST)

    def push_index(self, repo: str, tag: str, images: dict[str, BuiltImage]) -> tuple[str, bytes]:
        """`images`: {"linux/amd64": image, "linux/arm64": image, ...} -> (index digest, bytes)."""
        manifests = []
        for plat, image in images.items():
            self.push_image(repo, None, image)
            os_, arch, *variant = plat.split("/")
            platform = {"os": os_, "architecture": arch}
            if variant:
                platform["variant"] = variant[0]
            manifests.append(
                {
                    "mediaType": OCI_MANIFEST,
                    "digest": image.manifest_digest,
                    "size": len(image.manifest),
                    "platform": platform,
                }
            )
        index = json.dumps(
            {"schemaVersion": 2, "mediaType": OCI_INDEX, "manifests": manifests}, sort_keys=True
        ).encode()
        return self.push_manifest(repo, tag, index, OCI_INDEX), index


def gzipped_rootfs(tar_path: str) -> str:
    """The rootfs tar gzip-compressed once and cached beside it (atomic write)."""
    out = tar_path + ".gz"
    if os.path.exists(out) and os.path.getmtime(out) >= os.path.getmtime(tar_path):
        return out
    from isal import igzip

    tmp = f"{out}.tmp{os.getpid()}"
    with open(tar_path, "rb") as src, igzip.open(tmp, "wb", compresslevel=1) as dst:
        for chunk in iter(lambda: src.read(1 << 20), b""):
            dst.write(chunk)
    os.replace(tmp, out)
    return out


def push_rootfs_image(pusher: Pusher, repo: str, tag: str, tar_path: str, env: list[str] | None = None) -> str:
    """A one-layer image of a real rootfs tar, gzip layer, OCI manifest; returns the manifest digest."""
    from imagebuild import file_sha256, image_config

    gz = gzipped_rootfs(tar_path)
    layer_digest = pusher.push_file_blob(repo, gz)
    config = json.dumps(image_config([file_sha256(tar_path)], env=env), sort_keys=True).encode()
    pusher.push_blob(repo, config)
    manifest = json.dumps(
        {
            "schemaVersion": 2,
            "mediaType": OCI_MANIFEST,
            "config": {
                "mediaType": "application/vnd.oci.image.config.v1+json",
                "digest": sha256(config),
                "size": len(config),
            },
            "layers": [
                {
                    "mediaType": "application/vnd.oci.image.layer.v1.tar+gzip",
                    "digest": layer_digest,
                    "size": os.path.getsize(gz),
                }
            ],
        },
        sort_keys=True,
    ).encode()
    return pusher.push_manifest(repo, tag, manifest, OCI_MANIFEST)


def push_one_layer(
    pusher: Pusher, repo: str, blob: bytes, diff_id: str, media_type: str, annotations: dict | None, tag: str
) -> str:
    """A one-layer OCI image of `blob` (its descriptor carrying `annotations` unless None); its manifest digest."""
    from imagebuild import image_config

    digest = pusher.push_blob(repo, blob)
    config = json.dumps(image_config([diff_id]), sort_keys=True).encode()
    pusher.push_blob(repo, config)
    desc: dict = {"mediaType": media_type, "digest": digest, "size": len(blob)}
    if annotations is not None:
        desc["annotations"] = annotations
    config_desc = {
        "mediaType": "application/vnd.oci.image.config.v1+json",
        "digest": sha256(config),
        "size": len(config),
    }
    manifest = {"schemaVersion": 2, "mediaType": OCI_MANIFEST, "config": config_desc, "layers": [desc]}
    return pusher.push_manifest(repo, tag, json.dumps(manifest, sort_keys=True).encode(), OCI_MANIFEST)
