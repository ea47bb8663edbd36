"""Build real image containers (docker-archive, OCI layout dir/archive) from layer tars, in Python.

Used by the tests to make synthetic images and to wrap the mmdebstrap rootfs tars as images.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import tarfile
from dataclasses import dataclass, field


@dataclass
class Symlink:
    target: str


@dataclass
class Hardlink:
    target: str


@dataclass
class Dir:
    pass


@dataclass
class Whiteout:
    """A `.wh.NAME` entry deleting NAME from lower layers."""


@dataclass
class Opaque:
    """A `.wh..wh..opq` marker inside this directory."""


def make_layer(files: dict[str, object]) -> bytes:
    """An uncompressed layer tar; values are bytes (file) or one of the markers above."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for path, value in files.items():
            if isinstance(value, Whiteout):
                head, _, base = path.rpartition("/")
                info = tarfile.TarInfo((head + "/" if head else "") + ".wh." + base)
                tar.addfile(info, io.BytesIO(b""))
                continue
            if isinstance(value, Opaque):
                info = tarfile.TarInfo(path.rstrip("/") + "/.wh..wh..opq")
                tar.addfile(info, io.BytesIO(b""))
                continue
            info = tarfile.TarInfo(path)
            if isinstance(value, Symlink):
                info.type, info.linkname = tarfile.SYMTYPE, value.target
                tar.addfile(info)
            elif isinstance(value, Hardlink):
                info.type, info.linkname = tarfile.LNKTYPE, value.target
                tar.addfile(info)
            elif isinstance(value, Dir):
                info.type, info.mode = tarfile.DIRTYPE, 0o755
                tar.addfile(info)
            else:
                data = bytes(value)  # type: ignore[arg-type]
                info.size, info.mode = len(data), 0o644
                tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def sha256(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def compress(data: bytes, kind: str | None) -> bytes:
    if kind == "gzip":
        return gzip.compress(data, compresslevel=1, mtime=0)
    if kind == "zstd":
        import zstandard

        return zstandard.ZstdCompressor(level=1).compress(data)
    return data


LAYER_TYPES = {
    "gzip": "application/vnd.oci.image.layer.v1.tar+gzip",
    "zstd": "application/vnd.oci.image.layer.v1.tar+zstd",
    None: "application/vnd.oci.image.layer.v1.tar",
}


@dataclass
class BuiltImage:
    config: bytes
    manifest: bytes
    blobs: dict[str, bytes] = field(default_factory=dict)  # digest -> bytes (layers + config)

    @property
    def manifest_digest(self) -> str:
        return sha256(self.manifest)


def image_config(diff_ids: list[str], env: list[str] | None = None, arch: str = "amd64") -> dict:
    return {
        "architecture": arch,
        "os": "linux",
        "config": {"Env": env or ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"]},
        "rootfs": {"type": "layers", "diff_ids": diff_ids},
        "history": [{"created_by": "imgcheck test"} for _ in diff_ids],
    }


def build_oci(
    layers: list[bytes], compression: str | None = "gzip", env: list[str] | None = None, arch: str = "amd64"
) -> BuiltImage:
    blobs = {}
    descs = []
    for raw in layers:
        blob = compress(raw, compression)
        blobs[sha256(blob)] = blob
        descs.append({"mediaType": LAYER_TYPES[compression], "digest": sha256(blob), "size": len(blob)})
    config = json.dumps(image_config([sha256(l) for l in layers], env, arch), sort_keys=True).encode()
    blobs[sha256(config)] = config
    manifest = json.dumps(
        {
            "schemaVersion": 2,
            "mediaType": "application/vnd.oci.image.manifest.v1+json",
            "config": {
                "mediaType": "application/vnd.oci.image.config.v1+json",
                "digest": sha256(config),
                "size": len(config),
            },
            "layers": descs,
        },
        sort_keys=True,
    ).encode()
    return BuiltImage(config=config, manifest=manifest, blobs=blobs)


def write_oci_dir(path: str, image: BuiltImage, ref_name: str | None = "latest") -> str:
    os.makedirs(os.path.join(path, "blobs", "sha256"), exist_ok=True)
    with open(os.path.join(path, "oci-layout"), "w") as fh:
        json.dump({"imageLayoutVersion": "1.0.0"}, fh)
    for digest, data in list(image.blobs.items()) + [(image.manifest_digest, image.manifest)]:
        with open(os.path.join(path, "blobs", "sha256", digest.split(":")[1]), "wb") as fh:
            fh.write(data)
    desc = {
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "digest": image.manifest_digest,
        "size": len(image.manifest),
    }
    if ref_name:
        desc["annotations"] = {"org.opencontainers.image.ref.name": ref_name}
    with open(os.path.join(path, "index.json"), "w") as fh:
        json.dump({"schemaVersion": 2, "manifests": [desc]}, fh)
    return path


def _add_bytes(tar: tarfile.TarFile, name: str, data: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    tar.addfile(info, io.BytesIO(data))


def write_tar_members(path: str, members: dict[str, bytes]) -> str:
    """A plain tar of regular files, name -> bytes, in the given order."""
    with tarfile.open(path, "w") as tar:
        for name, data in members.items():
            _add_bytes(tar, name, data)
    return path


def write_oci_archive(path: str, image: BuiltImage) -> str:
    with tarfile.open(path, "w") as tar:
        _add_bytes(tar, "oci-layout", json.dumps({"imageLayoutVersion": "1.0.0"}).encode())
        desc = {
            "mediaType": "application/vnd.oci.image.manifest.v1+json",
            "digest": image.manifest_digest,
            "size": len(image.manifest),
        }
        _add_bytes(tar, "index.json", json.dumps({"schemaVersion": 2, "manifests": [desc]}).encode())
        for digest, data in list(image.blobs.items()) + [(image.manifest_digest, image.manifest)]:
            _add_bytes(tar, "blobs/sha256/" + digest.split(":")[1], data)
    return path


def write_docker_archive(
    path: str,
    layers: list[bytes],
    env: list[str] | None = None,
    tag: str = "imgcheck-test:latest",
    layer_files: list[str] | None = None,
) -> str:
    """Legacy `docker save` layout: <id>/layer.tar per layer, manifest.json, <config>.json.

    `layer_files` may name real layer tar files on disk (streamed in, never held in memory).
    """
    diff_ids = [sha256(l) for l in layers]
    if layer_files:
        diff_ids = [file_sha256(p) for p in layer_files]
    config = json.dumps(image_config(diff_ids, env), sort_keys=True).encode()
    config_name = hashlib.sha256(config).hexdigest() + ".json"
    names = []
    with tarfile.open(path, "w") as tar:
        _add_bytes(tar, config_name, config)
        if layer_files:
            for diff_id, file in zip(diff_ids, layer_files):
                name = diff_id.split(":")[1] + "/layer.tar"
                tar.add(file, arcname=name)
                names.append(name)
        else:
            for diff_id, data in zip(diff_ids, layers):
                name = diff_id.split(":")[1] + "/layer.tar"
                _add_bytes(tar, name, data)
                names.append(name)
        manifest = [{"Config": config_name, "RepoTags": [tag], "Layers": names}]
        _add_bytes(tar, "manifest.json", json.dumps(manifest).encode())
    return path


def file_sha256(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return "sha256:" + h.hexdigest()
