"""One layer, read once as a stream: what it adds, what it hides, and the bytes extractors want.

A LayerIndex depends only on the layer's bytes and the wants, so layers can be indexed in any
order (or in parallel, or from a cache) and merged afterwards in layer order.
"""

from __future__ import annotations

import hashlib
from array import array
from bisect import bisect_left
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from ..errors import BadInputError, LimitExceededError
from ..sources.read_options import Limits
from ..streams import ByteStream, ReadintoStream, readinto_of
from .compression import DECOMPRESS_ERRORS, bad_stream, open_decompressed
from .tarwalk import DIRTYPE, LNKTYPE, REGTYPES, SYMTYPE, TarFormatError, TarHeader, TarWalker
from .wants import WantSet

WHITEOUT_PREFIX = ".wh."
OPAQUE_MARKER = ".wh..wh..opq"

FILE, SYMLINK, HARDLINK, DIR, OTHER = "file", "symlink", "hardlink", "dir", "other"


@dataclass
class Entry:
    path: str
    kind: str
    size: int = 0
    mode: int = 0
    linkname: str | None = None  # symlink target as written, or hard-link target path
    data: bytes | None = None
    truncated: bool = False  # bytes were wanted but the file exceeded the limit
    layer: str | None = None
    scan: str | None = None  # a streaming scanner's result (Want.scan), e.g. the fatbin architectures


@dataclass
class LayerIndex:
    digest: str
    entries: dict[str, Entry] = field(default_factory=dict)  # wanted entries and every symlink
    whiteouts: set[str] = field(default_factory=set)  # paths deleted for lower layers
    opaque_dirs: set[str] = field(default_factory=set)  # dirs whose lower contents are hidden
    nondir_hashes: array[int] = field(default_factory=lambda: array("Q"))  # sorted hashes of non-dir paths
    # sorted hashes of the directories this layer has, named or implied by a member's path: under
    # overlayfs an upper directory replaces a lower symlink or file of the same path
    dir_hashes: array[int] = field(default_factory=lambda: array("Q"))
    entry_count: int = 0
    uncompressed_bytes: int = 0
    # sha256 of the uncompressed tar as read (what a config's diff_id names); None from a cache
    # entry written before it was recorded, or from sources that are not tars (squashfs, SIF)
    uncompressed_digest: str | None = None
    # a seekable layer read by range (view/estargz.py, view/zstdchunked.py): the compressed bytes fetched; 0 for a
    # whole read. Such an index is never cached (its diff_id was not checked)
    range_bytes: int = 0
    # a re-read from a file index (view/file_index.py): the uncompressed bytes inflated for the new wants; 0 otherwise
    reread_bytes: int = field(default=0, compare=False)
    reread_compressed: int = field(default=0, compare=False)  # and the compressed bytes of the blob it read
    from_file_index: bool = field(default=False, compare=False)
    # a whole read's by-products, never part of a cache entry: each member with its data offset and the compression
    # (for the file index written beside the cache entry), the seek-point index when rapidgzip inflated the layer,
    # and lines for the facts' notes (a file index that did not match)
    walk: tuple[str, list[Any]] | None = field(default=None, compare=False, repr=False)
    seek_index: bytes | None = field(default=None, compare=False, repr=False)
    # with the seek index: a sha256 of every file_index.SPAN bytes of the verified blob, for Range re-reads
    seek_spans: bytes | None = field(default=None, compare=False, repr=False)
    read_notes: list[str] = field(default_factory=list, compare=False)

    def has_nondir(self, path: str) -> bool:
        return self.has_hash(path_hash(path))

    def has_hash(self, h: int) -> bool:
        i = bisect_left(self.nondir_hashes, h)
        return i < len(self.nondir_hashes) and self.nondir_hashes[i] == h

    def has_dir(self, path: str) -> bool:
        return self.has_dir_hash(path_hash(path))

    def has_dir_hash(self, h: int) -> bool:
        i = bisect_left(self.dir_hashes, h)
        return i < len(self.dir_hashes) and self.dir_hashes[i] == h


def path_hash(path: str) -> int:
    # A stable 64-bit hash (unlike hash()), so an index can be cached across processes.
    return int.from_bytes(hashlib.blake2b(path.encode("utf-8", "surrogateescape"), digest_size=8).digest(), "big")


def normalise(name: str) -> str | None:
    """Tar member name -> path relative to the image root, or None if it is the root itself.

    `..` cannot climb above the root: it is resolved lexically and clamped, as a container
    runtime would when unpacking.
    """
    rest = name[2:] if name.startswith("./") else name
    if rest and rest[0] not in "./" and "/." not in rest and "//" not in rest and "\\" not in rest:
        return rest.rstrip("/")  # the common case: nothing to resolve (one test per member, not a loop)
    parts: list[str] = []
    for part in name.replace("\\", "/").split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if parts:
                parts.pop()
            continue
        parts.append(part)
    return "/".join(parts) or None


class _CountingReader:
    """Counts (and optionally hashes) the uncompressed bytes as the walk pulls them into its buffer.

    `pipelined`: each chunk is hashed in a thread of its own while the next chunk is inflated (hashlib and the
    inflate release the GIL), so one layer's read uses two cores where one is idle (the last layer of an image, or a
    layer that dominates it). Every byte is still hashed, in order, before verify() answers: the walk hands out two
    buffers in turn (tarwalk._Chunks), and a chunk's hash is waited for before the buffer after it is handed out, so
    no buffer is refilled while it is hashed."""

    def __init__(
        self,
        raw: ReadintoStream,
        limits: Limits,
        what: str,
        verify_digest: str | None,
        hash_it: bool = True,
        pipelined: bool = False,
    ) -> None:
        self._readinto = readinto_of(raw)
        self._limits = limits
        self._what = what
        self.count = 0
        # Hashed unless the caller verifies these very bytes already: a layer is only as
        # trustworthy as the config's diff_id it matches.
        self._hash = hashlib.sha256() if hash_it else None
        self._verify = verify_digest
        self._pool: ThreadPoolExecutor | None = None
        if pipelined and hash_it:
            self._pool = ThreadPoolExecutor(1, thread_name_prefix="imgcheck-diff-id")
        self._hashing: Future[None] | None = None
        self.buffers = 2 if self._pool is not None else 1  # what the walk must take in turn

    def readinto(self, buffer: bytearray | memoryview) -> int:
        n = self._readinto(buffer)  # (pipelined: while the chunk before is hashed)
        self.count += n
        if self.count > self._limits.max_uncompressed:
            raise LimitExceededError(
                f"{self._what}: decompresses to more than {self._limits.max_uncompressed} bytes (limit)"
            )
        if n and self._hash is not None:
            chunk = memoryview(buffer)[:n]
            if self._pool is None:
                self._hash.update(chunk)
            else:
                self._wait()
                self._hashing = self._pool.submit(self._hash.update, chunk)
        return n

    def _wait(self) -> None:
        if self._hashing is not None:
            hashing, self._hashing = self._hashing, None
            hashing.result()

    def close(self) -> None:
        """Ends the hashing thread (the layer's read is over, whether it verified or not)."""
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None

    def verify(self) -> str | None:
        """After the walk has drained the stream: the digest of every uncompressed byte, checked
        against the expected diff_id when there is one."""
        if self._hash is None:
            return None
        self._wait()
        got = "sha256:" + self._hash.hexdigest()
        if self._verify is not None and got != self._verify:
            raise BadInputError(
                f"digest mismatch for {self._what}: its uncompressed content is {got}, "
                f"the image config's diff_id says {self._verify}"
            )
        return got


# A layer from this compressed size has its uncompressed bytes hashed in a second thread (_CountingReader): below
# it the thread's start and hand-offs cost more than the overlap gains.
PIPELINE_MIN = 8 * 1024**2


def index_layer(
    raw: ByteStream,
    digest: str,
    wants: WantSet,
    limits: Limits = Limits(),
    verify_uncompressed: bool = False,
    layer_id: str | None = None,
    diff_id: str | None = None,
    seek_spacing: int | None = None,
    span_digests: bool = False,
    pipelined: bool = False,
) -> LayerIndex:
    """Stream one layer and index it. `raw` may be a VerifyingReader; it is finished here.

    `digest` is what the stream is verified against; `layer_id` is how facts name the layer;
    `diff_id` (from the image config) is what the uncompressed tar must hash to. Either digest
    failing is an error, never an index. `seek_spacing`: a gzip layer gets seek points about that many compressed
    bytes apart (view/zran.py), kept on the index for its file index (a later re-read of only the wanted files by
    offset); with `span_digests` also the digest of every file_index.SPAN of the blob (a re-read by HTTP Range checks
    each span it fetches against them: one more sha256 of the compressed bytes, so only where a Range re-read can be).
    `pipelined`: the uncompressed bytes are hashed in a second thread while the next chunk is inflated (_CountingReader).
    """
    what = f"layer {digest}"
    layer_id = layer_id or digest
    from .file_index import SPAN, Recorder  # it builds on this module
    from .zran import Inflater

    track_spans = getattr(raw, "track_spans", None) if seek_spacing and span_digests else None
    if track_spans is not None:
        track_spans(SPAN)  # before the first byte is read

    build = LayerBuilder(layer_id, wants, limits, what)
    idx = build.idx
    recorder = Recorder()
    inflater: Inflater | None = None
    counter: _CountingReader | None = None
    try:
        stream, compression = open_decompressed(raw, seek_spacing)
        inflater = stream if isinstance(stream, Inflater) else None
        expected = diff_id or (digest if verify_uncompressed else None)
        if diff_id and verify_uncompressed and diff_id != digest:
            raise BadInputError(f"{what}: named {digest} but its config's diff_id is {diff_id}")
        # An uncompressed blob named by its diff_id is the diff_id's bytes once the blob's own
        # digest verifies (raw.finish() below): hashing them a second time would prove nothing.
        same_bytes = bool(diff_id) and diff_id == digest and not verify_uncompressed and hasattr(raw, "finish")
        counter = _CountingReader(stream, limits, what, expected, hash_it=not same_bytes, pipelined=pipelined)
        walker = TarWalker(counter, buffers=counter.buffers)
        for member in walker:
            recorder.add(member, walker.offset)
            build.add(member, walker.read_data, walker.feed_data)
        # the digest covers everything, including what follows the end-of-archive marker
        walker.drain()
        idx.uncompressed_digest = counter.verify()
        idx.uncompressed_bytes = counter.count
        finish = getattr(raw, "finish", None)
        if finish:
            finish()
        if same_bytes:
            idx.uncompressed_digest = diff_id
        blob_bytes = getattr(raw, "bytes_read", None)  # a VerifyingReader's: the blob's size, once finished
        if inflater is not None and blob_bytes is not None:  # its seek points, kept once every byte verified
            idx.seek_index = inflater.index(blob_bytes, counter.count)
            if idx.seek_index is not None and track_spans is not None:
                idx.seek_spans = raw.span_digests()  # type: ignore[attr-defined]  # it has track_spans
    except TarFormatError as exc:
        raise TarFormatError(f"{what}: {exc}") from None  # which layer, for the one line a user sees
    except (BadInputError, LimitExceededError):
        raise
    except DECOMPRESS_ERRORS as exc:
        raise bad_stream(what, exc) from None
    finally:
        if counter is not None:
            counter.close()  # joins its hashing thread before anything else runs (a fork needs none running)
        if inflater is not None:
            inflater.close()  # frees its inflate state (the caller closes the layer's stream)
    done = build.finish()
    if recorder.members is not None:
        done.walk = (compression, recorder.members)
    return done


class LayerBuilder:
    """A layer's index, one tar member at a time: what a streamed tar and a seekable layer's table of contents
    (view/seekable.py) both feed, so the two give the same index for the same members. `read_data(limit)` gives
    a wanted file's bytes (None: over the limit), `feed_data(consume)` streams them to a scanner."""

    def __init__(self, layer_id: str, wants: WantSet, limits: Limits, what: str) -> None:
        self.idx = LayerIndex(digest=layer_id)
        self._wants, self._limits, self._what = wants, limits, what
        self._hashes: list[int] = []
        self._dirs = _Dirs(limits.max_dir_bytes, what)
        self._symlinks = 0
        self._kept = 0

    def add(
        self,
        member: TarHeader,
        read_data: Callable[[int], bytes | None],
        feed_data: Callable[[Callable[[memoryview | bytes], object]], bool],
        read_at: Callable[[int, int], bytes] | None = None,
    ) -> None:
        idx, limits, what = self.idx, self._limits, self._what
        idx.entry_count += 1
        if idx.entry_count > limits.max_entries:
            raise LimitExceededError(f"{what}: more than {limits.max_entries} entries (limit)")
        path = normalise(member.name)
        if path is None:
            return
        parent, _, base = path.rpartition("/")
        self._dirs.add_with_parents(parent)
        if base.startswith(WHITEOUT_PREFIX):
            if base == OPAQUE_MARKER:
                # At the layer's root the marker hides nothing: overlayfs never consults the
                # opaque flag of the root (Docker 20.10 overlay2: lower files stay visible).
                if parent:
                    idx.opaque_dirs.add(parent)
                return
            hidden = base[len(WHITEOUT_PREFIX) :]
            if hidden not in ("", ".", ".."):
                idx.whiteouts.add(f"{parent}/{hidden}" if parent else hidden)
            return
        typ = member.type
        if typ == DIRTYPE:
            self._dirs.add_with_parents(path)
            return
        self._hashes.append(path_hash(path))
        layer_id, entries, wants = idx.digest, idx.entries, self._wants
        if typ == SYMTYPE:
            self._symlinks += 1
            if self._symlinks > limits.max_symlinks:
                raise LimitExceededError(f"{what}: more than {limits.max_symlinks} symlinks (limit)")
            entries[path] = Entry(path, SYMLINK, linkname=member.linkname, layer=layer_id)
            return
        if not wants.wanted(path):
            return
        if typ == LNKTYPE:
            entries[path] = Entry(path, HARDLINK, linkname=normalise(member.linkname), layer=layer_id)
        elif typ in REGTYPES:
            entry = Entry(path, FILE, size=member.size, mode=member.mode, layer=layer_id)
            limit = wants.content_limit(path)
            scanner = wants.scanner(path)
            if limit is not None:
                entry.data = read_data(limit)
                entry.truncated = entry.data is None
                self._kept += len(entry.data or b"")
                if self._kept > limits.max_kept_bytes:
                    raise LimitExceededError(
                        f"{what}: the files read from it total more than "
                        f"{limits.max_kept_bytes} bytes (limit IMGCHECK_MAX_WANTED_BYTES)"
                    )
            if scanner is not None:
                entry.scan = scan_entry(scanner, member.size, entry.data, feed_data, read_at)
            entries[path] = entry
        else:
            entries[path] = Entry(path, OTHER, layer=layer_id)

    def finish(self) -> LayerIndex:
        idx = self.idx
        _resolve_hardlinks(idx)
        idx.nondir_hashes = array("Q", sorted(set(self._hashes)))
        idx.dir_hashes = array("Q", sorted({path_hash(d) for d in self._dirs.paths}))
        return idx


def scan_entry(
    name: str,
    size: int,
    data: bytes | None,
    feed_data: Callable[[Callable[[memoryview | bytes], object]], bool],
    read_at: Callable[[int, int], bytes] | None = None,
) -> str | None:
    """Run the scanner `name` over a file: its kept bytes, else its stream (`feed_data(consume)` -> False when
    the stream cannot be fed, e.g. a sparse tar member). A file readable by offset (`read_at(offset, n)`, e.g. in
    a squashfs) is first read by its structure, which skips what the scanner does not look at."""
    from .fatbin import SCANNERS, STRUCTURE_SCANNERS, NeedStream

    if read_at is not None and name in STRUCTURE_SCANNERS:
        try:
            return STRUCTURE_SCANNERS[name](read_at, size)
        except NeedStream:
            pass
    scan = SCANNERS[name](size)
    if data is not None:
        scan.feed(data)
    elif not feed_data(scan.feed):
        return None
    return scan.result()


class _Dirs:
    """The directories a layer names or implies, with the bytes of their paths bounded."""

    def __init__(self, max_bytes: int, what: str) -> None:
        self.paths: set[str] = set()
        self._bytes = 0
        self._max = max_bytes
        self._what = what

    def add_with_parents(self, path: str) -> None:
        """`path` and its ancestors are directories of this layer (amortised: stops at a known one)."""
        paths = self.paths
        while path and path not in paths:
            self._bytes += len(path)
            if self._bytes > self._max:
                raise LimitExceededError(
                    f"{self._what}: its directory paths total more than {self._max} bytes "
                    "(limit IMGCHECK_MAX_DIR_BYTES)"
                )
            paths.add(path)
            path = path.rpartition("/")[0]


def kept_bytes(idx: LayerIndex) -> int:
    return sum(len(e.data) for e in idx.entries.values() if e.data is not None and e.kind == FILE)


def _resolve_hardlinks(idx: LayerIndex) -> None:
    """Give wanted hard links their target's bytes when the target was kept in the same layer."""
    for entry in idx.entries.values():
        if entry.kind == HARDLINK and entry.linkname:
            target = idx.entries.get(entry.linkname)
            if target is not None and target.kind == FILE:
                entry.kind, entry.size, entry.mode = FILE, target.size, target.mode
                entry.data, entry.truncated, entry.scan = target.data, target.truncated, target.scan
