"""`docker:REF`: an image in the local Docker daemon, read from its `docker save` stream.

The save stream is read once, front to back, never held in memory or written to disk. Its
manifest.json comes after the layers (docker writes the tar in path order, and hex digests sort
before "manifest.json"), so every layer-like member is indexed as it streams by, with the wants
the layer walk asks for, and matched to its place in the image once manifest.json and the config
have arrived. The image's metadata (config, diff_ids, platform) comes from the daemon's inspect
answer, and the config in the stream must hash to the inspected image ID, so the stream is known
to be the image that was inspected.
"""

from __future__ import annotations

import hashlib
import io
import os
import posixpath
import tarfile
import threading
from collections.abc import Iterator
from typing import BinaryIO

from .. import safejson
from ..errors import BadInputError, UnavailableError, UsageError
from .base import LayerRef, OpenedImage, Source, VerifyingReader, parse_digest
from .platform import Platform, PlatformMismatchError, parse_platform

MAX_JSON = 8 * 1024 * 1024
# Per socket read. Docker 20.10 exports a whole image to a temp dir before its first byte, which
# takes minutes for a 20 GB framework image; the SDK's 60 s default would cut that off.
DEFAULT_TIMEOUT = 900
MAX_MEMBERS = 100_000
CHUNK = 1 << 20


class IterStream(io.RawIOBase):
    """A read-only file object over an iterator of byte chunks (the SDK's save generator)."""

    def __init__(self, chunks: Iterator[bytes], what: str):
        self._chunks = chunks
        self._buf = b""
        self._what = what

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:
        while not self._buf:
            try:
                self._buf = next(self._chunks)
            except StopIteration:
                return 0
            except Exception as exc:  # requests/urllib3 errors when the daemon drops the stream
                from .http import describe

                raise UnavailableError(f"{self._what}: the Docker daemon's stream broke ({describe(exc)})") from None
        n = min(len(b), len(self._buf))
        b[:n] = self._buf[:n]
        self._buf = self._buf[n:]
        return n


class _HashingReader:
    """Replays a sniffed head, then the member; hashes every byte (the member's raw digest)."""

    def __init__(self, head: bytes, fh: BinaryIO):
        self._head = head
        self._fh = fh
        self.hash = hashlib.sha256(head)

    def read(self, n: int = -1) -> bytes:
        if self._head:
            data = self._head if n is None or n < 0 or n >= len(self._head) else self._head[:n]
            self._head = self._head[len(data) :]
            return data
        data = self._fh.read(n)
        self.hash.update(data)
        return data


def _platform_of_attrs(attrs: dict) -> str | None:
    os_, arch, variant = attrs.get("Os"), attrs.get("Architecture"), attrs.get("Variant")
    if not isinstance(os_, str) or not isinstance(arch, str):
        return None
    return str(Platform(os_, arch, variant if isinstance(variant, str) and variant else None))


def daemon_address() -> str:
    return os.environ.get("DOCKER_HOST") or "unix:///var/run/docker.sock"


class DockerDaemonSource(Source):
    """`docker:REF`. `timeout`: seconds per daemon read; `client`: a docker.DockerClient (tests).

    Its layers come only as the one save stream: the opened image's save_stream is this source."""

    def __init__(self, ref: str, platform: Platform | None = None, timeout: float | None = None, client=None):
        if not ref or ref != ref.strip():
            raise UsageError(f"invalid docker: reference {ref!r}")
        self.ref = ref
        self.where = f"docker:{ref}"
        self.platform = platform
        self.timeout = timeout
        self._client = client
        self._image_id: str | None = None
        self._layers: list[LayerRef] = []
        self._cache: dict[tuple, list | Exception] = {}
        self._lock = threading.Lock()

    def _connect(self):
        import docker

        if self._client is None:
            try:
                self._client = docker.from_env(timeout=15)  # a daemon that is there answers at once
                self._client.ping()
                self._client.api.timeout = int(self.timeout or DEFAULT_TIMEOUT)
            except Exception as exc:  # DockerException, requests errors: the daemon is not there
                from .http import describe

                raise UnavailableError(
                    f"cannot connect to the Docker daemon at {daemon_address()}: is it running? ({describe(exc)})"
                ) from None
        return self._client

    def open(self) -> OpenedImage:
        import docker

        client = self._connect()
        try:
            image = client.images.get(self.ref)
        except docker.errors.ImageNotFound:
            raise UnavailableError(
                f"{self.where}: no such image in the local Docker daemon "
                "(pull it, or read it from its registry without the docker: prefix)"
            ) from None
        except docker.errors.APIError as exc:
            if exc.status_code == 400:
                raise UsageError(f"{self.where}: the daemon rejects the reference ({exc.explanation})") from None
            raise UnavailableError(
                f"{self.where}: the Docker daemon answered {exc.status_code} ({exc.explanation})"
            ) from None
        except docker.errors.DockerException as exc:
            raise UnavailableError(f"{self.where}: {exc}") from None
        attrs = image.attrs
        image_id = attrs.get("Id")
        diff_ids = (attrs.get("RootFS") or {}).get("Layers") or []
        if not isinstance(image_id, str) or not isinstance(diff_ids, list):
            raise BadInputError(f"{self.where}: the daemon's image description lacks an Id or RootFS layers")
        parse_digest(image_id)
        for d in diff_ids:
            if not isinstance(d, str):
                raise BadInputError(f"{self.where}: malformed layer id {d!r}")
            parse_digest(d)
        platform = _platform_of_attrs(attrs)
        if self.platform is not None:
            got = parse_platform(platform) if platform else None
            w = self.platform
            if (
                got is None
                or (got.os, got.architecture) != (w.os, w.architecture)
                or (w.variant is not None and got.variant != w.variant)
            ):
                raise PlatformMismatchError(
                    f"{self.where}: the daemon holds {platform or 'an image of unknown platform'}, not the requested "
                    f"{w} (docker pull --platform {w} first)",
                    (platform,) if platform else (),
                )
        self._image_id = image_id
        self._layers = [
            LayerRef(digest=d, media_type="layer.tar", index=i, digest_of_uncompressed=True, diff_id=d)
            for i, d in enumerate(diff_ids)
        ]
        config = {
            "architecture": attrs.get("Architecture"),
            "os": attrs.get("Os"),
            "config": attrs.get("Config") or {},
            "rootfs": {"type": "layers", "diff_ids": list(diff_ids)},
        }
        if attrs.get("Variant"):
            config["variant"] = attrs["Variant"]
        notes = [f"{self.where}: registry digest {d}" for d in attrs.get("RepoDigests") or [] if isinstance(d, str)]
        return OpenedImage(
            reference=self.where,
            digest=image_id,
            platform=platform,
            config=config,
            layers=list(self._layers),
            opener=self._open_layer,
            notes=notes,
            save_stream=self,
        )

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None
        self._cache = {}

    def _open_layer(self, layer: LayerRef) -> BinaryIO:
        # A save stream cannot be opened at one layer; every reader goes through index().
        raise UnavailableError(f"{self.where}: layers of the docker: source are read only as one stream")

    def index(self, layer: LayerRef, wants, limits, index_tar):
        """Layer `layer`'s index from one pass over the save stream, each member indexed by
        `index_tar` (the view's view.layer_index.index_layer: this package never imports the view)."""
        # read_view asks for layers from several threads; the first caller streams the whole save
        # and the others wait for its result rather than start a second `docker save`.
        key = (wants.key(), limits)
        with self._lock:
            if key not in self._cache:
                try:
                    self._cache = {key: self._read_stream(wants, limits, index_tar)}  # keep one pass's indexes only
                except Exception as exc:
                    self._cache = {key: exc}  # the other layers' callers get the same error, no new pass
                    raise
            found = self._cache[key]
            if isinstance(found, Exception):
                raise found
            return found[layer.index]

    # -- the stream ---------------------------------------------------------------------------

    def _read_stream(self, wants, limits, index_layer) -> list:
        client = self._connect()
        try:
            chunks = client.api.get_image(self._image_id, chunk_size=CHUNK)
        except Exception as exc:
            from .http import describe

            raise UnavailableError(
                f"{self.where}: the Docker daemon refused to export the image ({describe(exc)})"
            ) from None
        stream = io.BufferedReader(IterStream(iter(chunks), self.where), buffer_size=CHUNK)
        small: dict[str, bytes] = {}  # JSON members: manifest.json, config, index.json
        indexed: dict[str, tuple] = {}  # member name -> (LayerIndex, raw sha256)
        aliases: dict[str, str] = {}  # symlinked/hard-linked member -> target (docker dedups layers)
        try:
            with tarfile.open(fileobj=stream, mode="r|") as tar:
                for count, member in enumerate(tar, 1):
                    if count > MAX_MEMBERS:
                        raise BadInputError(f"{self.where}: save stream has more than {MAX_MEMBERS} members")
                    name = posixpath.normpath("/" + member.name).lstrip("/")
                    if member.issym() or member.islnk():
                        target = (
                            member.linkname
                            if member.islnk()
                            else posixpath.join(posixpath.dirname(name), member.linkname)
                        )
                        aliases[name] = posixpath.normpath(target)
                        continue
                    if not member.isfile():
                        continue
                    fh = tar.extractfile(member)
                    assert fh is not None
                    head = fh.read(512)
                    if head[:1] in (b"{", b"[") and member.size <= MAX_JSON:
                        small[name] = head + fh.read()
                        continue
                    if not (name.endswith("/layer.tar") or name.startswith("blobs/")):
                        continue  # VERSION, legacy per-layer json and other bookkeeping
                    indexed[name] = self._index_member(name, head, fh, wants, limits, index_layer)
        except tarfile.TarError as exc:
            raise BadInputError(f"{self.where}: the save stream is not a valid tar ({exc})") from None
        finally:
            close = getattr(chunks, "close", None)
            if close:
                close()
        return self._assemble(small, indexed, aliases, wants, limits, index_layer)

    def _index_member(self, name: str, head: bytes, fh: BinaryIO, wants, limits, index_layer) -> tuple:
        reader = _HashingReader(head, fh)
        blob_digest = None
        if name.startswith("blobs/sha256/"):
            blob_digest = "sha256:" + name.rsplit("/", 1)[1]
            parse_digest(blob_digest)
        source = VerifyingReader(reader, blob_digest, f"{self.where}: {name}") if blob_digest else reader
        # Named provisionally by the member; renamed to its diff_id once manifest.json places it.
        idx = index_layer(source, blob_digest or name, wants, limits, verify_uncompressed=False, layer_id=name)
        while reader.read(CHUNK):
            pass
        return idx, "sha256:" + reader.hash.hexdigest()

    def _assemble(self, small: dict, indexed: dict, aliases: dict, wants, limits, index_layer) -> list:
        if "manifest.json" not in small:
            raise BadInputError(f"{self.where}: the save stream has no manifest.json")
        manifest = safejson.loads(small["manifest.json"], f"{self.where}: manifest.json")
        entries = [e for e in manifest if isinstance(e, dict)] if isinstance(manifest, list) else []
        if len(entries) != 1:
            raise BadInputError(f"{self.where}: expected one image in the save stream, found {len(entries)}")
        entry = entries[0]
        config_name, layer_names = entry.get("Config"), entry.get("Layers")
        if not isinstance(config_name, str) or not isinstance(layer_names, list):
            raise BadInputError(f"{self.where}: manifest.json lacks Config or Layers")
        config_bytes = small.get(posixpath.normpath(config_name))
        if config_bytes is None:
            raise BadInputError(f"{self.where}: the save stream lacks the config {config_name}")
        got_id = "sha256:" + hashlib.sha256(config_bytes).hexdigest()
        if got_id != self._image_id:
            raise BadInputError(
                f"{self.where}: the exported config hashes to {got_id}, not the inspected image {self._image_id}"
            )
        config = safejson.loads(config_bytes, f"{self.where}: config")
        diff_ids = ((config.get("rootfs") or {}).get("diff_ids") or []) if isinstance(config, dict) else []
        if diff_ids != [l.diff_id for l in self._layers] or len(layer_names) != len(diff_ids):
            raise BadInputError(f"{self.where}: the exported image's layers differ from the inspected ones")
        result = []
        for layer, name in zip(self._layers, layer_names):
            key = posixpath.normpath(str(name))
            for _hop in range(8):
                if key not in aliases:
                    break
                key = aliases[key]
            if key not in indexed and key in small:  # a tiny layer that looked like JSON
                indexed[key] = self._index_member(key, small[key], io.BytesIO(b""), wants, limits, index_layer)
            if key not in indexed:
                raise BadInputError(f"{self.where}: layer {name} is missing from the save stream")
            idx, _raw_digest = indexed[key]
            if idx.uncompressed_digest != layer.diff_id:
                # Whatever the member's compression (docker >= 25 may save blobs as stored), its
                # uncompressed tar must hash to the diff_id, or it is not that layer.
                raise BadInputError(
                    f"digest mismatch for {self.where}: layer {name}: expected {layer.diff_id}, "
                    f"got {idx.uncompressed_digest}"
                )
            result.append(_relabelled(idx, layer.layer_id))
        return result


def _relabelled(idx, layer_id: str):
    """The same index, named by the layer's diff_id (a copy: one member may fill two positions)."""
    import copy

    out = copy.copy(idx)
    out.digest = layer_id
    out.entries = {}
    for path, entry in idx.entries.items():
        e = copy.copy(entry)
        e.layer = layer_id
        out.entries[path] = e
    return out
