"""Read every layer of an opened image into LayerIndexes (in parallel, via the cache), then merge.

Layers are indexed independently, so they can be read concurrently (in forked worker processes
where that is safe, else in threads: the decompressors and hashlib release the GIL) and merged
afterwards in manifest order, which keeps whiteouts correct.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor, as_completed
from typing import Any

from ..errors import BadInputError, LimitExceededError, UnavailableError
from ..sources.base import DOCKER_LAYER_GZIP, OCI_LAYER_GZIP, OCI_LAYER_TAR, SQUASHFS_LAYER, LayerRef, OpenedImage
from ..sources.read_options import Limits, ReadStats
from ..streams import ByteStream, SeekableByteStream, readinto_of
from .cache import ClaimingCache, LayerCache
from .file_index import FileIndex, FileIndexStore, Stale, record_of, reread, seek_points_readable, seek_spacing
from .fileview import FileView
from .layer_index import FILE, HARDLINK, PIPELINE_MIN, LayerIndex, index_layer, kept_bytes, path_hash
from .layer_processes import can_fork, index_in_processes
from .parallel_gzip import index_if_parallel
from .progress import ByteProgress, LayerProgress
from .wants import Want, WantSet

GZIP_LAYERS = (OCI_LAYER_GZIP, DOCKER_LAYER_GZIP)
SOCI_LAYERS = (*GZIP_LAYERS, OCI_LAYER_TAR)  # soci/soci_index.go builds zTOCs for gzip and uncompressed OCI layers


class _Progressing:
    """Reports compressed bytes to a progress display as the layer walk pulls them."""

    def __init__(self, raw: ByteStream, digest: str, progress: ByteProgress) -> None:
        self._raw, self._digest, self._progress = raw, digest, progress
        self._readinto = readinto_of(raw)

    def read(self, n: int = -1) -> bytes:
        data = self._raw.read(n)
        if data:
            self._progress.layer_bytes(self._digest, len(data))
        return data

    def readinto(self, buffer: bytearray | memoryview) -> int:
        n = self._readinto(buffer)
        if n:
            self._progress.layer_bytes(self._digest, n)
        return n

    def __getattr__(self, name: str) -> Any:  # finish(), close(), ... of the underlying reader
        return getattr(self._raw, name)


def index_image_layer(
    image: OpenedImage,
    layer: LayerRef,
    wants: WantSet,
    limits: Limits,
    progress: ByteProgress | None = None,
    record: FileIndex | None = None,
) -> LayerIndex:
    """One layer's index, by the reader its media type needs: the one place that chooses. `record`: the layer's
    file index from an earlier verified read, which serves new wants by reading only the wanted files."""
    if image.save_stream is not None:  # docker: every layer tar is in one save stream
        # index_layer gives a LayerIndex; the SaveStream Protocol says object: sources/ cannot name the view's types
        return image.save_stream.index(layer, wants, limits, index_layer)  # type: ignore[return-value]  # see above
    if layer.toc_digest is not None and image.read_range is not None:  # eStargz or zstd:chunked from a registry
        from .estargz import index_estargz
        from .seekable import NotSeekable
        from .zstdchunked import index_zstd_chunked

        by_range = index_zstd_chunked if layer.toc_position is not None else index_estargz
        try:
            return by_range(layer, image.read_range, wants, limits)
        except (NotSeekable, BadInputError, UnavailableError) as exc:
            image.notes.append(f"{image.reference}: layer {layer.digest} read whole: {exc}")
    elif image.ztoc_of is not None and image.read_range is not None and layer.media_type in SOCI_LAYERS:
        from .seekable import NotSeekable
        from .soci import index_soci

        try:  # a gzip or tar layer with a SOCI zTOC (a SOCI index v2 the manifest names, or a v1 referrer)
            ztoc = image.ztoc_of(layer)
            if ztoc is not None:
                return index_soci(layer, ztoc, image.read_range, wants, limits)
        except (NotSeekable, BadInputError, UnavailableError) as exc:
            image.notes.append(f"{image.reference}: layer {layer.digest} read whole: its SOCI zTOC: {exc}")
    if record is not None and layer.media_type != SQUASHFS_LAYER and record.layer_id == layer.layer_id:
        ranged = _by_range(image, layer, record)
        raw = None if ranged is not None else image.open_layer(layer)  # by range: no stream opened
        try:
            return reread(raw, record, layer.size, wants, limits, ranged)
        except Stale as exc:
            stale = str(exc)
        finally:
            close = getattr(raw, "close", None)
            if close:
                close()  # before the whole read opens the layer again (a registry stream holds a connection)
        idx = index_image_layer(image, layer, wants, limits, progress)
        idx.read_notes.append(
            f"{image.reference}: layer {layer.digest}: its file index does not match the blob ({stale}); read whole"
        )
        return idx
    raw = image.open_layer(layer)
    try:
        if layer.media_type == SQUASHFS_LAYER:  # a seekable byte range, read where it lies
            from .squashfs import index_squashfs

            assert isinstance(raw, SeekableByteStream), "a squashfs layer is opened as a seekable range"
            return index_squashfs(raw, layer.size or 0, layer.layer_id, wants, limits, image.reference)
        # a large gzip blob in a local file: inflated on several cores when IMGCHECK_PARALLEL_GZIP_MIN asks for it
        parallel, spent = index_if_parallel(raw, layer, wants, limits)
        if parallel is not None:
            return parallel
        if spent:  # it did not verify: read again with ISA-L, which gives the index or the one-line error
            raw.close()
            raw = image.open_layer(layer)
        if progress is not None:
            raw = _Progressing(raw, layer.digest, progress)
        # a tar: plain, gzip or zstd (view/compression.py tells them apart by their first bytes)
        return index_layer(
            raw,
            layer.digest,
            wants,
            limits,
            verify_uncompressed=layer.digest_of_uncompressed,
            layer_id=layer.layer_id,
            diff_id=layer.diff_id,
            seek_spacing=seek_spacing(layer),
            span_digests=image.read_range is not None,  # a registry blob: a re-read by Range checks every span
            pipelined=(layer.size or 0) >= PIPELINE_MIN,
        )
    finally:
        close = getattr(raw, "close", None)
        if close:
            close()


def _by_range(image: OpenedImage, layer: LayerRef, record: FileIndex) -> Callable[[int, int], bytes] | None:
    """A registry blob's bytes by HTTP Range, for a re-read from the seek points its file index has (written after a
    verified full read of this digest, e.g. from an OCI layout); None when the re-read takes another way."""
    read_range = image.read_range
    if read_range is None or record.seek is None or record.compression != "gzip" or layer.size != record.blob_size:
        return None
    if not seek_points_readable():
        return None
    return lambda start, end: read_range(layer, start, end)


def _from_cache(cache: LayerCache | None, layer: LayerRef, stats: ReadStats) -> LayerIndex | None:
    hit = cache.get(layer.digest) if cache is not None else None
    if hit is not None and hit.digest == layer.layer_id:
        stats.layers_cached.append(layer.digest)
        return hit
    return None


def _index_reported(
    image: OpenedImage,
    layer: LayerRef,
    wants: WantSet,
    limits: Limits,
    progress: LayerProgress | None,
    record: FileIndex | None = None,
) -> LayerIndex:
    """One layer in this process, its start and end shown on the progress display."""
    if progress is not None:
        progress.layer_started(layer.digest, layer.size)
    try:
        return index_image_layer(image, layer, wants, limits, progress, record)
    finally:
        if progress is not None:
            progress.layer_finished(layer.digest)


def _index_all(
    image: OpenedImage,
    layers: list[LayerRef],
    wants: WantSet,
    limits: Limits,
    workers: int,
    progress: LayerProgress | None,
    stats: ReadStats,
    records: dict[int, FileIndex],
) -> Iterator[tuple[LayerRef, LayerIndex]]:
    """(layer, index) for each of `layers`, in the order they finish."""
    workers = max(1, min(workers, len(layers)))
    if workers == 1:
        for layer in layers:
            yield layer, _index_reported(image, layer, wants, limits, progress, records.get(layer.index))
        return
    # Largest layers first: a big layer started last would leave the other cores idle at the end.
    order = sorted(layers, key=lambda l: -(l.size or 0))
    if image.save_stream is None and can_fork():
        stats.layer_processes = workers
        yield from index_in_processes(
            order,
            lambda layer, counted: index_image_layer(image, layer, wants, limits, counted, records.get(layer.index)),
            workers,
            progress,
        )
        return
    pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="imgcheck-layer")
    try:
        futures = {
            pool.submit(_index_reported, image, l, wants, limits, progress, records.get(l.index)): l for l in order
        }
        for future in as_completed(futures):
            yield futures[future], future.result()
    finally:
        pool.shutdown(wait=True, cancel_futures=True)  # after an error, layers not started are not read


def read_view(
    image: OpenedImage,
    wants: WantSet,
    limits: Limits = Limits(),
    cache: LayerCache | None = None,
    workers: int | None = None,
    progress: LayerProgress | None = None,
    stats: ReadStats | None = None,
) -> tuple[FileView, list[LayerIndex]]:
    """Index every layer (from the cache where it can), then merge them in manifest order."""
    stats = stats if stats is not None else ReadStats()
    found: dict[int, LayerIndex] = {}
    to_read = []
    for layer in image.layers:
        hit = _from_cache(cache, layer, stats)
        if hit is not None:
            _hold(found, layer.index, hit, limits)
        else:
            to_read.append(layer)
    theirs: list[LayerRef] = []
    claiming = cache if isinstance(cache, ClaimingCache) else None  # the shared cache: layers others are reading
    if to_read and claiming is not None:
        to_read, theirs, arrived = claiming.claim_reads(to_read)
        for position, idx in arrived.items():
            _hold(found, position, idx, limits)
            stats.layers_cached.append(image.layers[position].digest)
    files = getattr(cache, "files", None) if image.save_stream is None else None
    records = _file_records(files, image, to_read)
    try:
        for layer, idx in _index_all(
            image, to_read, wants, limits, workers or os.cpu_count() or 1, progress, stats, records
        ):
            _count(stats, layer, idx, image, files, records)
            if idx.range_bytes:
                stats.layers_ranged.append(layer.digest)
                stats.bytes_ranged += idx.range_bytes
            elif cache is not None:
                cache.put(layer.digest, idx)  # only reached when the digest verified (or from its file index)
            _hold(found, layer.index, idx, limits)
        for layer in theirs:  # after our own layers: their readers had that long
            assert claiming is not None  # only claim_reads gives layers to wait for
            shared = claiming.wait_for(layer)
            if shared is not None:
                stats.layers_cached.append(layer.digest)
                stats.layers_waited.append(layer.digest)
            else:  # the claim is ours now (its reader died) or the wait ran out
                shared = _index_reported(image, layer, wants, limits, progress)
                stats.layers_read.append(layer.digest)
                stats.bytes_decompressed += shared.uncompressed_bytes
                claiming.put(layer.digest, shared)
            _hold(found, layer.index, shared, limits)
    finally:
        if claiming is not None:
            claiming.release_reads([l for l in to_read + theirs if l.index not in found])
    indexes = [found[l.index] for l in image.layers]
    for layer, idx in zip(image.layers, indexes):
        missing = [e.linkname for e in idx.entries.values() if e.kind == HARDLINK and e.linkname]
        if missing:
            # A wanted hard link whose target was not kept: read that one layer again, keeping
            # the targets too. Rare (package managers seldom hard-link libraries), so a re-read is cheap.
            extra = WantSet(wants.wants + tuple(Want(re.escape(p), content=True) for p in missing))
            indexes[layer.index] = index_image_layer(
                image, layer, extra, limits, record=_record(files, records, layer, image)
            )
            _count(stats, layer, indexes[layer.index], image, files, records)
    view = FileView(indexes)
    targets = _uncollected_targets(view, indexes, wants)
    for position, paths in sorted(targets.items()):
        # A wanted name that is a symlink to a file no want matches (libibverbs.so.1 ->
        # /opt/x/lib.so): that file is what a process opens, so its layer is read again keeping it.
        layer = image.layers[position]
        extra = WantSet(
            wants.wants + tuple(Want(re.escape(p), content=True, max_bytes=limit) for p, limit in sorted(paths.items()))
        )
        indexes[position] = index_image_layer(image, layer, extra, limits, record=_record(files, records, layer, image))
        _count(stats, layer, indexes[position], image, files, records)
    if targets:
        view = FileView(indexes)
    return view, indexes


def _file_records(files: FileIndexStore | None, image: OpenedImage, layers: list[LayerRef]) -> dict[int, FileIndex]:
    """{layer position: its file index} for the layers about to be read (a damaged record: a note, a whole read)."""
    if files is None:
        return {}
    records = {}
    for layer in layers:
        if layer.media_type == SQUASHFS_LAYER:
            continue
        record = files.get(layer.digest)
        if record is not None and record.layer_id == layer.layer_id:
            records[layer.index] = record
    _take_notes(files, image)
    return records


def _take_notes(files: FileIndexStore, image: OpenedImage) -> None:
    """The store's lines about damaged records, into the image's notes (and so the facts')."""
    image.notes.extend(f"{image.reference}: {note}" for note in files.notes)
    files.notes.clear()


def _record(
    files: FileIndexStore | None, records: dict[int, FileIndex], layer: LayerRef, image: OpenedImage
) -> FileIndex | None:
    """The layer's file index for a second read with more wants (a hard link's or symlink's target): the one just
    written or looked up, else the store's (a layer the cache served)."""
    if files is None or layer.media_type == SQUASHFS_LAYER:
        return None
    if layer.index not in records:
        found = files.get(layer.digest)
        if found is not None and found.layer_id == layer.layer_id:
            records[layer.index] = found
        _take_notes(files, image)
    return records.get(layer.index)


def _count(
    stats: ReadStats,
    layer: LayerRef,
    idx: LayerIndex,
    image: OpenedImage,
    files: FileIndexStore | None,
    records: dict[int, FileIndex],
) -> None:
    """Add a read layer to the stats and the notes; keep the file index a whole verified read gives."""
    stats.layers_read.append(layer.digest)
    image.notes.extend(idx.read_notes)
    if idx.from_file_index:
        stats.layers_reread.append(layer.digest)
        stats.bytes_reread += idx.reread_bytes
        stats.bytes_reread_compressed += idx.reread_compressed
        return
    stats.bytes_decompressed += idx.uncompressed_bytes
    record = record_of(idx, layer.digest, layer.size) if files is not None else None
    if record is not None and files is not None and files.put(record):
        records[layer.index] = record
    idx.walk = idx.seek_index = idx.seek_spans = None  # written: the members need not be held with the index


def _hold(found: dict[int, LayerIndex], position: int, idx: LayerIndex, limits: Limits) -> None:
    """Add a layer's index to `found` under the image-wide cap on wanted bytes held at once (each layer is capped
    on its own too). A kept file that a higher layer replaces (the same path as a file or symlink there) is
    never what the image shows, so its bytes are let go first: every layer that installs a package carries its
    own copy of the whole dpkg status or rpmdb, and only the top one counts."""
    found[position] = idx
    # Only pairs with the new layer can have changed: its files under the layers above it, and the files of
    # the layers below it under it.
    uppers = [upper for at, upper in found.items() if at > position]
    _let_go_hidden(idx, uppers)
    for at, lower in found.items():
        if at < position:
            _let_go_hidden(lower, [idx])
    total = sum(kept_bytes(held) for held in found.values())
    if total > limits.max_kept_bytes:
        raise LimitExceededError(
            f"the files read from the image's layers total more than {limits.max_kept_bytes} "
            "bytes (limit IMGCHECK_MAX_WANTED_BYTES)"
        )


def _let_go_hidden(lower: LayerIndex, uppers: list[LayerIndex]) -> None:
    if not uppers:
        return
    for entry in lower.entries.values():
        if entry.data is not None and entry.kind == FILE:
            h = path_hash(entry.path)
            if any(upper.has_hash(h) for upper in uppers):
                entry.data = None  # hidden: the merged view takes the upper layer's entry


def _uncollected_targets(view: FileView, indexes: list[LayerIndex], wants: WantSet) -> dict[int, dict[str, int]]:
    """{layer position: {target path: content limit}} for wanted symlinks whose final target is a
    file that exists in the image but was not kept. The topmost layer holding the target is the
    one whose copy is visible (lower copies are hidden by it)."""
    from .fileview import SymlinkLoop
    from .layer_index import SYMLINK

    found: dict[int, dict[str, int]] = {}
    for path, entry in list(view.entries.items()):
        if entry.kind != SYMLINK or not wants.wanted(path):
            continue
        limit = wants.content_limit(path)
        if limit is None:
            continue
        try:
            real = view.resolve(path)
        except SymlinkLoop:
            continue
        if real in view.entries:
            continue
        h = path_hash(real)
        for position in range(len(indexes) - 1, -1, -1):
            if indexes[position].has_hash(h):
                slot = found.setdefault(position, {})
                slot[real] = max(limit, slot.get(real, 0))
                break
    return found
