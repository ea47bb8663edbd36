"""The contract every image source fulfils: a manifest's worth of metadata and its layers.

A source supplies layers (streams or byte ranges, each with its media type); the view picks the
reader by media type (view/reader.py) and indexes them. A source never imports the view.
"""

from __future__ import annotations

import hashlib
import os
import stat
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from ..errors import BadInputError
from ..streams import ByteStream, readinto_of

if TYPE_CHECKING:
    from _typeshed import WriteableBuffer

    from .digest_resolution import ResolvedDigest

# Media types we know how to read; anything else is refused by name.
DOCKER_MANIFEST = "application/vnd.docker.distribution.manifest.v2+json"
DOCKER_MANIFEST_LIST = "application/vnd.docker.distribution.manifest.list.v2+json"
DOCKER_CONFIG = "application/vnd.docker.container.image.v1+json"
DOCKER_LAYER_GZIP = "application/vnd.docker.image.rootfs.diff.tar.gzip"
DOCKER_LAYER_FOREIGN = "application/vnd.docker.image.rootfs.foreign.diff.tar.gzip"
OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json"
OCI_INDEX = "application/vnd.oci.image.index.v1+json"
OCI_CONFIG = "application/vnd.oci.image.config.v1+json"
OCI_LAYER_TAR = "application/vnd.oci.image.layer.v1.tar"
OCI_LAYER_GZIP = "application/vnd.oci.image.layer.v1.tar+gzip"
OCI_LAYER_ZSTD = "application/vnd.oci.image.layer.v1.tar+zstd"
OCI_LAYER_NONDIST_GZIP = "application/vnd.oci.image.layer.nondistributable.v1.tar+gzip"
OCI_LAYER_NONDIST_TAR = "application/vnd.oci.image.layer.nondistributable.v1.tar"
OCI_LAYER_NONDIST_ZSTD = "application/vnd.oci.image.layer.nondistributable.v1.tar+zstd"
# A whole squashfs filesystem as one layer (Enroot .sqsh, a SIF partition): a seekable byte range.
SQUASHFS_LAYER = "application/vnd.imgcheck.squashfs"

LAYER_MEDIA_TYPES = frozenset(
    {
        DOCKER_LAYER_GZIP,
        DOCKER_LAYER_FOREIGN,
        OCI_LAYER_TAR,
        OCI_LAYER_GZIP,
        OCI_LAYER_ZSTD,
        OCI_LAYER_NONDIST_GZIP,
        OCI_LAYER_NONDIST_TAR,
        OCI_LAYER_NONDIST_ZSTD,
        "layer.tar",  # docker-archive's legacy per-layer tar, no media type of its own
    }
)
MANIFEST_MEDIA_TYPES = frozenset({DOCKER_MANIFEST, OCI_MANIFEST})
INDEX_MEDIA_TYPES = frozenset({DOCKER_MANIFEST_LIST, OCI_INDEX})
MANIFEST_ACCEPT = ", ".join((OCI_INDEX, OCI_MANIFEST, DOCKER_MANIFEST_LIST, DOCKER_MANIFEST))


@dataclass(frozen=True)
class LayerRef:
    digest: str  # the digest the stream is verified against
    media_type: str
    size: int | None = None
    index: int = 0  # 0 = bottom layer
    digest_of_uncompressed: bool = False  # docker-archive layers are named by their diff_id
    diff_id: str | None = None  # digest of the uncompressed tar (config rootfs.diff_ids)
    # a seekable layer's table of contents (TOC), from the (verified) manifest's layer annotations; the layer can
    # then be read by range. eStargz (gzip; view/estargz.py): the sha256 of the TOC JSON, no position (a footer
    # gives it). zstd:chunked (zstd; view/zstdchunked.py): the digest of the compressed TOC and its position
    # `offset:length:uncompressed-length:type`.
    toc_digest: str | None = None
    toc_position: str | None = None

    @property
    def layer_id(self) -> str:
        """How facts name this layer: the diff_id, the same whatever the transport compression
        (what `docker inspect` shows as RootFS.Layers), else the blob digest."""
        return self.diff_id or self.digest


@dataclass(frozen=True)
class EnvFile:
    """The image's Env lives in a file of its filesystem, not in a config (Enroot, older SIFs):
    the view keeps that file and `parse` turns its text into NAME=VALUE lines."""

    path: str  # in the image, no leading slash
    parse: Callable[[str], list[str]]
    max_bytes: int


class SaveStream(Protocol):
    """The Docker daemon's mode: every layer arrives in one `docker save` stream, so the source
    walks that stream once and indexes each layer tar in it with the view's tar indexer."""

    # wants and limits are the view's WantSet and Limits, handed on to index_tar: a source never imports the view
    def index(self, layer: LayerRef, wants: Any, limits: Any, index_tar: Callable[..., object]) -> object: ...


@dataclass
class OpenedImage:
    """An image whose metadata is read; layers are opened one at a time on demand."""

    reference: str
    digest: str | None
    platform: str | None
    config: dict[str, Any]
    layers: list[LayerRef]
    opener: LayerOpener
    notes: list[str] = field(default_factory=list)
    env_file: EnvFile | None = None  # set only when the config carries no Env
    save_stream: SaveStream | None = (
        None  # layers come as one stream (docker:, a compressed docker-archive); opener unused
    )
    # bytes [start, end) of a layer blob, unverified (a registry's Range request): how a seekable layer is read
    read_range: Callable[[LayerRef, int, int], bytes] | None = None
    # a gzip layer's SOCI zTOC, verified by the digest its SOCI index names (sources/soci_index.py); None: no zTOC
    ztoc_of: Callable[[LayerRef], bytes | None] | None = None

    def open_layer(self, layer: LayerRef) -> ByteStream:
        """The layer's bytes: a stream for a tar, a seekable file of layer.size bytes for squashfs."""
        return self.opener(layer)


class LayerOpener(Protocol):
    def __call__(self, layer: LayerRef) -> ByteStream: ...


class Source(ABC):
    """What every image source can do. Capabilities a source lacks have their answer here."""

    def resolve_digest(self) -> ResolvedDigest | None:
        """The digest the reference names now, asked before any manifest or config is read (a
        registry's HEAD); None when only open() can tell (files on disk, the daemon)."""
        return None

    @abstractmethod
    def open(self) -> OpenedImage:
        """Read the metadata (verified), leave the layers to be opened on demand."""

    def close(self) -> None:  # noqa: B027  (a default that does nothing: a source holding nothing need not override it)
        """Release what open() holds (files, sessions); safe to call more than once."""


def media_type_of(doc: object, where: str) -> str | None:
    """A document's or descriptor's mediaType: absent, or a string (a list or object there is
    hostile, and would not even be hashable for the look-ups that follow)."""
    if not isinstance(doc, dict):
        raise BadInputError(f"{where}: expected a JSON object")
    value = doc.get("mediaType")
    if value is not None and not isinstance(value, str):
        raise BadInputError(f"{where}: mediaType {str(value)[:60]!r} is not a string")
    return value


def parse_digest(digest: str) -> tuple[str, str]:
    """Split 'sha256:<hex>' and check its shape (a malformed digest could name a path)."""
    if not isinstance(digest, str):
        raise BadInputError(f"digest {str(digest)[:60]!r} is not a string")
    algo, _, hexpart = digest.partition(":")
    if algo not in ("sha256", "sha512") or not hexpart:
        raise BadInputError(f"unsupported or malformed digest {digest!r}")
    want = 64 if algo == "sha256" else 128
    if len(hexpart) != want or any(c not in "0123456789abcdef" for c in hexpart):
        raise BadInputError(f"malformed digest {digest!r}")
    return algo, hexpart


def verify_bytes(data: bytes, digest: str, what: str) -> None:
    algo, hexpart = parse_digest(digest)
    got = hashlib.new(algo, data).hexdigest()
    if got != hexpart:
        raise BadInputError(f"digest mismatch for {what}: expected {digest}, got {algo}:{got}")


class VerifyingReader:
    """Wraps a stream and checks its digest when fully read.

    `finish()` drains what is left (so the digest covers every byte) and raises on mismatch;
    a result is never produced from bytes that failed verification.
    """

    def __init__(self, raw: ByteStream, digest: str, what: str, expected_size: int | None = None) -> None:
        algo, self._hex = parse_digest(digest)
        self._raw = raw
        self._readinto = readinto_of(raw)
        self._hash = hashlib.new(algo)
        self._digest = digest
        self._what = what
        self._size = 0
        self._expected_size = expected_size
        self._span = 0  # with track_spans(): the bytes per span digest (0: not tracked)
        self._span_hash = hashlib.sha256()
        self._span_fill = 0
        self._spans: list[bytes] = []

    def track_spans(self, span: int) -> None:
        """Also keep a sha256 of every `span` bytes (the last span may be shorter), from the first byte: a later
        read of single spans by HTTP Range checks each against these (view/file_index.RangeFile)."""
        if self._size or span <= 0:
            raise ValueError("spans are tracked from the first byte")
        self._span = span

    def span_digests(self) -> bytes:
        """The spans' sha256 digests, concatenated (32 bytes each), once the reader is finished."""
        if self._span_fill:
            self._spans.append(self._span_hash.digest())
            self._span_hash, self._span_fill = hashlib.sha256(), 0
        return b"".join(self._spans)

    def _account_spans(self, data: bytes | memoryview) -> None:
        view = memoryview(data).cast("B")
        while view:
            take = min(len(view), self._span - self._span_fill)
            self._span_hash.update(view[:take])
            self._span_fill += take
            view = view[take:]
            if self._span_fill == self._span:
                self._spans.append(self._span_hash.digest())
                self._span_hash, self._span_fill = hashlib.sha256(), 0

    def _account(self, data: bytes | memoryview) -> None:
        self._hash.update(data)
        if self._span:
            self._account_spans(data)
        self._size += len(data)
        if self._expected_size is not None and self._size > self._expected_size:
            raise BadInputError(f"{self._what} is larger than the {self._expected_size} bytes its manifest declares")

    def read(self, n: int = -1) -> bytes:
        data = self._raw.read(n)
        self._account(data)
        return data

    def readinto(self, b: WriteableBuffer) -> int:
        """Into the caller's buffer (decompressors and the tar walk use this: no copy per chunk)."""
        n = self._readinto(b)
        if n:
            self._account(memoryview(b)[:n])
        return n

    def readable(self) -> bool:
        return True

    def finish(self) -> None:
        while self.read(1 << 20):
            pass
        got = self._hash.hexdigest()
        if got != self._hex:
            raise BadInputError(f"digest mismatch for {self._what}: expected {self._digest}, got sha256:{got}")
        if self._expected_size is not None and self._size != self._expected_size:
            raise BadInputError(f"{self._what} is {self._size} bytes, its manifest declares {self._expected_size}")

    @property
    def bytes_read(self) -> int:
        return self._size

    def local_fileno(self) -> int | None:
        """The descriptor of the regular file these bytes are, whole, when nothing has been read yet (a reader
        that wants the file by offset, view/parallel_gzip.py, opens it anew and leaves this one to verify)."""
        fileno = getattr(self._raw, "fileno", None)
        if self._size or fileno is None:
            return None
        try:
            fd: int = fileno()
            st = os.fstat(fd)
            at = os.lseek(fd, 0, os.SEEK_CUR)
        except (OSError, ValueError):
            return None
        if not stat.S_ISREG(st.st_mode) or at != 0 or st.st_size != self._expected_size:
            return None
        return fd

    def read_at(self, offset: int, n: int) -> bytes | None:
        """Bytes at `offset` of the blob, NOT covered by the digest (None: not readable by offset). Only for a reader
        that trusts an earlier verified read of this digest: a file index's re-read (view/file_index.py)."""
        read_at = getattr(self._raw, "read_at", None)
        if read_at is not None:
            data: bytes = read_at(offset, n)
            return data
        fileno = getattr(self._raw, "fileno", None)
        if fileno is None:
            return None
        try:
            fd: int = fileno()
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return None
            return os.pread(fd, max(0, min(n, (self._expected_size or 0) - offset)), offset)
        except (OSError, ValueError):
            return None

    def close(self) -> None:
        close = getattr(self._raw, "close", None)
        if close:
            close()
