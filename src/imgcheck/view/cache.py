"""Content-addressed cache of per-layer indexes, as plain files under $IMGCHECK_HOME/cache/layers.

Keyed by the layer blob's digest and by what was kept (extractor version + wants), so a re-check
reads no layer and a base-image bump reads only the new ones. Safe for concurrent CI jobs without
a lock: each entry is written to a temporary file and renamed into place, and readers treat any
unreadable entry as a miss. Entries are written only after the layer's digest was verified.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import io
import json
import os
import tempfile
from array import array
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, runtime_checkable

from .. import safejson
from .layer_index import Entry, LayerIndex

if TYPE_CHECKING:
    from ..sources.base import LayerRef
    from .file_index import FileIndexStore

T = TypeVar("T")


@runtime_checkable
class ClaimingCache(Protocol):
    """A layer cache several readers share (shared_cache.SharedLayerCache): each layer is read by one of them,
    the others wait for its index."""

    def get(self, digest: str) -> LayerIndex | None: ...

    def put(self, digest: str, idx: LayerIndex) -> bool: ...

    def claim_reads(self, layers: list[LayerRef]) -> tuple[list[LayerRef], list[LayerRef], dict[int, LayerIndex]]: ...

    def wait_for(self, layer: LayerRef) -> LayerIndex | None: ...

    def release_reads(self, layers: list[LayerRef]) -> None: ...


# 2: dir_hashes and uncompressed_digest; 3: each entry's scan result; 4: a JSON line, then the kept files' bytes
# raw (base64 inside one JSON document held every kept byte about four times over while writing or reading)
CACHE_FORMAT = 4
DEFAULT_MAX_BYTES = 2 * 1024**3


class LayerCache:
    def __init__(self, root: str, namespace: str, max_bytes: int = DEFAULT_MAX_BYTES):
        """`namespace` identifies what an index holds (extractor version and wants)."""
        self.root = root
        self.dir = os.path.join(root, hashlib.sha256(namespace.encode()).hexdigest()[:16])
        self.max_bytes = max_bytes
        self.hits = 0
        self.misses = 0
        # the file indexes written beside the entries (view/file_index.py); None: none are kept or used
        self.files: FileIndexStore | None = None

    def _path(self, digest: str) -> str:
        algo, _, hexpart = digest.partition(":")
        return os.path.join(self.dir, algo, hexpart + ".json.gz")

    def get(self, digest: str) -> LayerIndex | None:
        path = self._path(digest)
        try:
            with gzip.open(path, "rb") as fh:
                idx = read_index(fh, "cache entry")
        except FileNotFoundError:
            self.misses += 1
            return None
        except (OSError, ValueError, KeyError, TypeError, EOFError, RecursionError, MemoryError):
            self.misses += 1
            _unlink_quietly(path)  # a damaged entry is dropped and rebuilt
            return None
        self.hits += 1
        os.utime(path)  # recently used entries survive pruning
        return idx

    def put(self, digest: str, idx: LayerIndex) -> bool:
        """Store an index; False (and nothing left behind) when the disk refuses."""
        return put_gzip(self._path(digest), lambda fh: write_index(idx, fh))

    def entries(self) -> list[tuple[str, int, float]]:
        return tree_entries(self.root)

    def prune(self, max_bytes: int | None = None) -> tuple[int, int]:
        return prune_tree(self.root, self.max_bytes if max_bytes is None else max_bytes)


def tree_entries(root: str) -> list[tuple[str, int, float]]:
    """(path, size, mtime) of every cache file below `root`."""
    found = []
    for base, _dirs, files in os.walk(root):
        for name in files:
            path = os.path.join(base, name)
            try:
                st = os.stat(path)
            except OSError:
                continue
            found.append((path, st.st_size, st.st_mtime))
    return found


def prune_tree(root: str, max_bytes: int) -> tuple[int, int]:
    """Delete least recently used files until the tree fits. Returns (files, bytes) removed."""
    entries = sorted(tree_entries(root), key=lambda e: e[2])
    total = sum(size for _, size, _ in entries)
    removed = freed = 0
    for path, size, _ in entries:
        if total <= max_bytes:
            break
        if _unlink_quietly(path):
            total -= size
            removed += 1
            freed += size
    return removed, freed


def put_gzip(path: str, write: Callable[[gzip.GzipFile], None]) -> bool:
    """Write a cache record gzip-compressed through a temporary file and a rename; False (and nothing left behind)
    when the disk refuses."""
    tmp = None
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=os.path.dirname(path))
        with os.fdopen(fd, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=1, mtime=0) as fh:
            write(fh)
        os.replace(tmp, path)
        return True
    except OSError:
        if tmp:
            _unlink_quietly(tmp)
        return False


def _unlink_quietly(path: str) -> bool:
    try:
        os.unlink(path)
        return True
    except OSError:
        return False


def write_index(idx: LayerIndex, fh: io.BufferedIOBase) -> None:
    """The header line, then each kept file's bytes in entry order (the header gives each length)."""
    fh.write(json.dumps(_encode(idx)).encode())
    fh.write(b"\n")
    for e in idx.entries.values():
        if e.data is not None:
            fh.write(e.data)


def read_index(fh: io.BufferedIOBase, what: str) -> LayerIndex:
    """An index written by write_index; ValueError when anything does not match."""
    doc = safejson.loads(fh.readline(), what, ValueError)
    idx = _decode(_want(doc, dict, "document"), fh.read)
    if fh.read(1):
        raise ValueError(f"{what}: bytes after the last kept file")
    return idx


def index_bytes(idx: LayerIndex) -> bytes:
    buf = io.BytesIO()
    write_index(idx, buf)
    return buf.getvalue()


def index_from_bytes(data: bytes, what: str) -> LayerIndex:
    return read_index(io.BytesIO(data), what)


def _encode(idx: LayerIndex) -> dict[str, Any]:
    return {
        "format": CACHE_FORMAT,
        "digest": idx.digest,
        "entries": [
            [
                e.path,
                e.kind,
                e.size,
                e.mode,
                e.linkname,
                len(e.data) if e.data is not None else None,
                e.truncated,
                e.scan,
            ]
            for e in idx.entries.values()
        ],
        "whiteouts": sorted(idx.whiteouts),
        "opaque_dirs": sorted(idx.opaque_dirs),
        "nondir_hashes": base64.b64encode(idx.nondir_hashes.tobytes()).decode(),
        "dir_hashes": base64.b64encode(idx.dir_hashes.tobytes()).decode(),
        "entry_count": idx.entry_count,
        "uncompressed_bytes": idx.uncompressed_bytes,
        "uncompressed_digest": idx.uncompressed_digest,
    }


def _want(value: object, kind: type[T], what: str) -> T:
    """A cache entry is data on disk anyone could have edited: every field is checked for type."""
    if not isinstance(value, kind) or isinstance(value, bool) and kind is not bool:
        raise ValueError(f"cache entry: {what} has the wrong type")
    return value


def _opt(value: object, kind: type[T], what: str) -> T | None:
    return None if value is None else _want(value, kind, what)


def _kept(read: Callable[[int], bytes], length: object) -> bytes | None:
    if length is None:
        return None
    n = _want(length, int, "data length")
    if n < 0:
        raise ValueError("cache entry: a negative data length")
    data = read(n)
    if len(data) != length:
        raise ValueError("cache entry: truncated kept file")
    return data


def _decode(doc: dict[str, Any], read: Callable[[int], bytes]) -> LayerIndex:
    """The header `doc`; `read(n)` gives the next n bytes of kept files."""
    _want(doc, dict, "document")
    if doc.get("format") != CACHE_FORMAT:
        raise ValueError("cache format")
    idx = LayerIndex(digest=_want(doc["digest"], str, "digest"))
    for row in _want(doc["entries"], list, "entries"):
        if not isinstance(row, list) or len(row) != 8:
            raise ValueError("cache entry: an entry has the wrong shape")
        path, kind, size, mode, linkname, data, truncated, scan = row
        idx.entries[_want(path, str, "path")] = Entry(
            path,
            _want(kind, str, "kind"),
            _want(size, int, "size"),
            _want(mode, int, "mode"),
            _opt(linkname, str, "linkname"),
            _kept(read, data),
            _want(truncated, bool, "truncated"),
            idx.digest,
            _opt(scan, str, "scan"),
        )
    idx.whiteouts = {_want(p, str, "whiteout") for p in _want(doc["whiteouts"], list, "whiteouts")}
    idx.opaque_dirs = {_want(p, str, "opaque dir") for p in _want(doc["opaque_dirs"], list, "opaque_dirs")}
    hashes = array("Q")
    hashes.frombytes(base64.b64decode(_want(doc["nondir_hashes"], str, "nondir_hashes"), validate=True))
    idx.nondir_hashes = hashes
    dir_hashes = array("Q")
    dir_hashes.frombytes(base64.b64decode(_want(doc["dir_hashes"], str, "dir_hashes"), validate=True))
    idx.dir_hashes = dir_hashes
    idx.entry_count = _want(doc["entry_count"], int, "entry_count")
    idx.uncompressed_bytes = _want(doc["uncompressed_bytes"], int, "uncompressed_bytes")
    idx.uncompressed_digest = _opt(doc.get("uncompressed_digest"), str, "uncompressed_digest")
    return idx
