"""One pass over a `docker save` tar stream, every layer member indexed as it streams by.

Used where layers cannot be opened one at a time cheaply: the Docker daemon's export (a stream
that can only be read once) and a compressed `docker save | gzip` archive (no byte offsets: each
layer opened on its own would inflate the archive again from its start). Layers are matched to
their place in the image once manifest.json and the config have arrived, and the config must hash
to the one the source read first, so the stream is known to be the image that was opened.
"""

from __future__ import annotations

import copy
import hashlib
import io
import posixpath
import tarfile
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .. import safejson
from ..errors import BadInputError
from ..streams import ByteStream
from .base import LayerRef, VerifyingReader, parse_digest

if TYPE_CHECKING:
    from tarfile import _Fileobj as TarFileobj  # typeshed's name for what tarfile.open(fileobj=...) accepts

MAX_JSON = 8 * 1024 * 1024
MAX_MEMBERS = 100_000
CHUNK = 1 << 20
# A member's index (the view's LayerIndex: this package never imports the view) and its raw sha256.
_Indexed = tuple[Any, str]


class _HashingReader:
    """Replays a sniffed head, then the member; hashes every byte (the member's raw digest)."""

    def __init__(self, head: bytes, fh: ByteStream) -> None:
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

    def close(self) -> None:
        """Nothing to release: the member belongs to the save stream, drained and closed by its reader."""


class SaveStreamReader:
    """The SaveStream of an opened image (sources/base.py): `open_stream()` gives the save tar as a
    stream and a function that closes it; `config_digest` is the config the source already read."""

    def __init__(
        self,
        where: str,
        open_stream: Callable[[], tuple[TarFileobj, Callable[[], None]]],
        config_digest: str,
        layers: list[LayerRef],
    ) -> None:
        self.where = where
        self._open_stream = open_stream
        self._config_digest = config_digest
        self._layers = layers
        self._cache: dict[tuple[object, object], list[Any] | Exception] = {}
        self._lock = threading.Lock()

    def index(self, layer: LayerRef, wants: Any, limits: Any, index_tar: Callable[..., Any]) -> Any:
        """Layer `layer`'s index from one pass over the stream, each member indexed by `index_tar`
        (the view's view.layer_index.index_layer: this package never imports the view)."""
        # read_view asks for layers from several threads; the first caller streams the whole save
        # and the others wait for its result rather than start a second pass.
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

    def _read_stream(self, wants: Any, limits: Any, index_layer: Callable[..., Any]) -> list[Any]:
        stream, close = self._open_stream()
        small: dict[str, bytes] = {}  # JSON members: manifest.json, config, index.json
        indexed: dict[str, _Indexed] = {}  # member name -> (LayerIndex, raw sha256)
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
            close()
        return self._assemble(small, indexed, aliases, wants, limits, index_layer)

    def _index_member(
        self, name: str, head: bytes, fh: ByteStream, wants: Any, limits: Any, index_layer: Callable[..., Any]
    ) -> _Indexed:
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

    def _assemble(
        self,
        small: dict[str, bytes],
        indexed: dict[str, _Indexed],
        aliases: dict[str, str],
        wants: Any,
        limits: Any,
        index_layer: Callable[..., Any],
    ) -> list[Any]:
        if "manifest.json" not in small:
            raise BadInputError(f"{self.where}: the save stream has no manifest.json")
        manifest = safejson.loads(small["manifest.json"], f"{self.where}: manifest.json")
        entries = [e for e in manifest if isinstance(e, dict)] if isinstance(manifest, list) else []
        config_bytes = None
        for entry in entries:  # an archive may hold several images: the one whose config was opened
            config_name = entry.get("Config")
            candidate = small.get(posixpath.normpath(config_name)) if isinstance(config_name, str) else None
            if candidate is not None and "sha256:" + hashlib.sha256(candidate).hexdigest() == self._config_digest:
                config_bytes, layer_names = candidate, entry.get("Layers")
                break
        if config_bytes is None:
            raise BadInputError(
                f"{self.where}: the save stream holds no image with the config {self._config_digest} "
                "(not the inspected image)"
            )
        config = safejson.loads(config_bytes, f"{self.where}: config")
        diff_ids = ((config.get("rootfs") or {}).get("diff_ids") or []) if isinstance(config, dict) else []
        if (
            not isinstance(layer_names, list)
            or diff_ids != [l.diff_id for l in self._layers]
            or len(layer_names) != len(diff_ids)
        ):
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


def _relabelled(idx: Any, layer_id: str) -> Any:
    """The same index, named by the layer's diff_id (a copy: one member may fill two positions)."""
    out = copy.copy(idx)
    out.digest = layer_id
    out.entries = {}
    for path, entry in idx.entries.items():
        e = copy.copy(entry)
        e.layer = layer_id
        out.entries[path] = e
    return out
