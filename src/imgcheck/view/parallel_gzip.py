"""Inflate one large gzip layer on several cores (rapidgzip), with the same digests checked as the ISA-L read.

A gzip stream is inflated on one core by ISA-L (view/compression.py). rapidgzip (PyPI) inflates one stream in
parallel chunks, reading the file by offset from a handle of its own; so it is used only for a layer that is a
whole regular local file (an OCI layout's blob), gzip, at least IMGCHECK_PARALLEL_GZIP_MIN bytes (off unless set), in a process where no other thread runs (the CLI and its layer worker processes; not `imgcheck serve`),
and only when rapidgzip is installed (`pip install 'imgcheck[parallel-gzip]'`). benchmarks/bench_inflate.py
measures both decoders per layer size; docs/benchmarks.md has the numbers the threshold comes from.

Verification is exactly as strict as the ISA-L read: the compressed digest is computed over the layer's bytes as
read in order, by the source's own VerifyingReader drained in a thread (hashlib releases the GIL), and the
diff_id over every inflated byte in order by index_layer, as for any layer. Any failure of this path - a corrupt
or truncated stream, a digest mismatch, a rapidgzip error, or a stream whose gzip trailer does not agree with what
was inflated (rapidgzip reads a truncated stream to its end without an error) - falls back to reading the layer
again with ISA-L, which gives the same index or the same one-line error as when this path does not exist.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from ..streams import ByteStream, readinto_of
from .compression import GZIP_MAGIC

if TYPE_CHECKING:
    from ..sources.base import LayerRef
    from ..sources.read_options import Limits
    from .layer_index import LayerIndex
    from .wants import WantSet

# Off unless IMGCHECK_PARALLEL_GZIP_MIN names a threshold (bytes of a compressed layer): on the 2-core benchmark
# machine rapidgzip was no faster than ISA-L at any layer size measured (62 MB to 462 MB of gzip) and took 343 MB of
# RSS for one 360 MB layer where ISA-L takes 14 MB (docs/benchmarks.md, benchmarks/bench_inflate.py), so ISA-L is
# the faster per size there. A machine with idle cores can opt in.
THREADS = 2
# Seek points are not taken from rapidgzip any more (it held 210-250 MB per layer to export them,
# docs/benchmarks.md): the one in-order inflate takes them (view/zran.py), so a layer read here keeps none.


@runtime_checkable
class _LocalVerifying(ByteStream, Protocol):
    """A source's VerifyingReader: it may name the local file it reads, and checks the digest when finished."""

    def local_fileno(self) -> int | None: ...

    def finish(self) -> None: ...

    def track_spans(self, span: int) -> None: ...

    def span_digests(self) -> bytes: ...


def min_bytes() -> int | None:
    """The compressed size from which a layer is inflated in parallel, or None (never)."""
    return _size_setting("IMGCHECK_PARALLEL_GZIP_MIN")


def _size_setting(name: str) -> int | None:
    """A byte threshold from the environment: None when unset, 0, negative or not a number (off)."""
    value = os.environ.get(name, "").strip()
    try:
        threshold = int(value) if value else None
    except ValueError:
        return None
    return threshold if threshold is not None and threshold > 0 else None


def threads_for(layer: LayerRef) -> int | None:
    """How many threads rapidgzip inflates this layer with, or None when it is left to ISA-L."""
    size = layer.size or 0
    parallel = min_bytes()
    if parallel is not None and size >= parallel and (os.cpu_count() or 1) >= 2:
        return THREADS
    return None


def available() -> bool:
    try:
        import rapidgzip  # type: ignore[import-not-found]  # noqa: F401  (a compiled module without type hints)
    except ImportError:
        return False
    return True


def _alone() -> bool:
    return threading.active_count() == 1


def usable(raw: ByteStream, layer: LayerRef) -> int | None:
    """The descriptor of the local gzip file `raw` reads, when this layer is one for the parallel inflate."""
    # without a diff_id only the gzip CRC would check the inflated bytes: ISA-L checks it on every member
    if threads_for(layer) is None or layer.digest_of_uncompressed or not layer.diff_id:
        return None
    if not _alone():  # its C++ side writes to fd 2, silenced only where nothing else runs
        return None
    fd = raw.local_fileno() if isinstance(raw, _LocalVerifying) else None
    if fd is None or not available():
        return None
    try:
        if os.pread(fd, 2, 0) != GZIP_MAGIC:
            return None
    except OSError:
        return None
    return fd


class _Inflated:
    """rapidgzip's output as the stream index_layer walks; counts what it gives."""

    def __init__(self, gz: Any) -> None:  # a rapidgzip.RapidgzipFile
        self._readinto = readinto_of(gz)
        self.count = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray | memoryview) -> int:
        n = self._readinto(buffer)
        self.count += n
        return n

    def read(self, n: int = -1) -> bytes:
        buffer = bytearray(1 << 20 if n is None or n < 0 else n)
        got = self.readinto(buffer)
        return bytes(buffer[:got])

    def close(self) -> None:
        """Nothing to release: the RapidgzipFile under it is closed by its with-block."""


class _Fallback(Exception):
    """This path could not give a verified index: read the layer again with ISA-L."""


def index_if_parallel(
    raw: ByteStream, layer: LayerRef, wants: WantSet, limits: Limits
) -> tuple[LayerIndex | None, bool]:
    """(the layer's index, False) read by the parallel inflate; (None, False) when this layer is not one for it,
    nothing read; (None, True) when it was tried and did not verify: `raw` is spent, read the layer again."""
    fd = usable(raw, layer)
    if fd is None or not isinstance(raw, _LocalVerifying):  # usable() gives a descriptor of such a reader only
        return None, False
    try:
        return index_parallel(raw, fd, layer, wants, limits), False
    except _Fallback:
        return None, True


def index_parallel(raw: _LocalVerifying, fd: int, layer: LayerRef, wants: WantSet, limits: Limits) -> LayerIndex:
    """The layer's index, inflated by rapidgzip from its own handle on the file `fd` while `raw` (the source's
    VerifyingReader) is drained and verified in a thread. Raises _Fallback when anything does not verify.
    No seek points are kept from this read (a re-read after a wants change inflates this layer in order)."""
    import rapidgzip

    from .layer_index import index_layer

    failed: list[BaseException] = []

    def verify_compressed() -> None:
        try:
            raw.finish()
        except BaseException as exc:  # noqa: BLE001  (reported to the caller, which falls back)
            failed.append(exc)

    hasher = threading.Thread(target=verify_compressed, name="layer-digest", daemon=True)
    hasher.start()
    try:
        # a descriptor of its own (its own file offset): the VerifyingReader reads the same file in order
        with (
            _quiet_stderr(),
            rapidgzip.RapidgzipFile(f"/proc/self/fd/{fd}", parallelization=threads_for(layer) or THREADS) as gz,
        ):
            stream = _Inflated(gz)
            idx = index_layer(stream, layer.digest, wants, limits, layer_id=layer.layer_id, diff_id=layer.diff_id)
    except Exception as exc:  # noqa: BLE001  (any failure: the ISA-L read decides what it is)
        raise _Fallback(f"{type(exc).__name__}: {exc}") from None
    finally:
        hasher.join()
    if failed:
        raise _Fallback(str(failed[0]))
    if not _trailer_agrees(fd, layer.size or 0, stream.count):
        raise _Fallback("the gzip trailer does not match what was inflated (truncated or several members)")
    idx.walk = ("gzip", idx.walk[1]) if idx.walk is not None else None  # rapidgzip gave the tar: the blob is gzip
    return idx


@contextlib.contextmanager
def _quiet_stderr() -> Iterator[None]:
    """File descriptor 2 to /dev/null: rapidgzip prints its own line on a truncated stream (C++ std::cerr), and the
    ISA-L read that follows gives the one error line imgcheck prints. Only used when no other thread runs."""
    sys.stderr.flush()
    saved = os.dup(2)
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(null, 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(null)


def _trailer_agrees(fd: int, size: int, inflated: int) -> bool:
    """The last gzip member's ISIZE (the inflated size mod 2**32) equals all that was inflated: true for a whole
    single-member stream, false for a truncated one (rapidgzip stops at the cut without an error) and for several
    members (then ISA-L, which reads every member's trailer, decides)."""
    try:
        tail = os.pread(fd, 4, size - 4)
    except OSError:
        return False
    return len(tail) == 4 and int.from_bytes(tail, "little") == inflated % (1 << 32)
