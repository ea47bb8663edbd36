"""Layers indexed in parallel: in forked worker processes (the same indexes as in this process, clean errors,
progress drawn from the workers' counters, no worker left behind) and in threads."""

from __future__ import annotations

import dataclasses
import json
import multiprocessing
import os
import threading

import pytest
from imagebuild import Opaque, Symlink, Whiteout, build_oci, make_layer, write_oci_dir

from imgcheck.errors import BadInputError, UnavailableError
from imgcheck.extractors.assemble import want_set
from imgcheck.sources.resolve import open_source, parse_image_ref
from imgcheck.view import reader
from imgcheck.view.cache import LayerCache
from imgcheck.view.layer_processes import can_fork
from imgcheck.view.reader import ReadStats, read_view

LAYERS = [
    make_layer(
        {
            "etc/os-release": b"ID=debian\nVERSION_ID=12\n",
            "usr/lib/x86_64-linux-gnu/libibverbs.so.1.14.44.0": b"\x7fELF" + b"v" * 3000,
            "usr/lib/libmlx5.so.1": Symlink("libmlx5.so.1.24.44.0"),
            "opt/big.bin": os.urandom(400_000),
        }
    ),
    make_layer(
        {
            "usr/lib/libmlx5.so.1": Whiteout(),
            "etc/nccl.conf": b"NCCL_IB_HCA=mlx5_0\n",
            "opt/other.bin": os.urandom(300_000),
        }
    ),
    make_layer({"opt": Opaque(), "usr/lib/libnccl.so.2.21.5": b"n" * 100}),
    make_layer({"etc/nccl.conf": b"NCCL_IB_TIMEOUT=22\n"}),
]


@pytest.fixture
def forking(monkeypatch):
    """Worker processes even if a fixture left a thread running in the test process (a token
    server, say): the workers never touch it, and the rule for users stays as it is."""
    monkeypatch.setattr(reader, "can_fork", lambda: True)


@pytest.fixture
def image_ref(tmp_path):
    return "oci-dir:" + write_oci_dir(str(tmp_path / "img"), build_oci(LAYERS))


def read(ref: str, workers: int, **kw):
    source = open_source(parse_image_ref(ref))
    try:
        image = source.open()
        stats = ReadStats()
        _, indexes = read_view(kw.pop("image_hook", lambda i: i)(image), want_set(), workers=workers, stats=stats, **kw)
        return indexes, stats
    finally:
        source.close()


def test_worker_processes_index_layers_as_this_process_does(image_ref, forking):
    in_workers, by_workers = read(image_ref, 2)
    here, by_this = read(image_ref, 1)
    assert by_workers.layer_processes == 2 and by_this.layer_processes == 0
    assert in_workers == here  # entries with their bytes, whiteouts, opaque dirs, path hashes, counts
    assert any(e.data for idx in in_workers for e in idx.entries.values())  # kept bytes came back
    assert in_workers[1].whiteouts == {"usr/lib/libmlx5.so.1"} and in_workers[2].opaque_dirs == {"opt"}
    assert sorted(by_workers.layers_read) == sorted(by_this.layers_read) and len(by_this.layers_read) == 4
    assert by_workers.bytes_decompressed == by_this.bytes_decompressed > 700_000
    assert multiprocessing.active_children() == []


def test_threads_while_another_thread_runs(image_ref):
    """A fork copies locks other threads may hold; with any other thread alive, layers go to threads."""
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        assert not can_fork()
        indexes, stats = read(image_ref, 2)
    finally:
        stop.set()
        other.join()
    assert stats.layer_processes == 0 and len(stats.layers_read) == 4
    assert indexes == read(image_ref, 1)[0]


def test_cache_hits_stay_in_this_process_and_misses_go_to_workers(image_ref, forking, tmp_path):
    cache = LayerCache(str(tmp_path / "cache"), "test")
    _, first = read(image_ref, 2, cache=cache)
    _, again = read(image_ref, 2, cache=cache)
    assert first.layer_processes == 2 and len(first.layers_read) == 4
    assert again.layers_read == [] and len(again.layers_cached) == 4 and again.layer_processes == 0


def test_a_bad_layer_is_one_clear_error_and_no_worker_is_left(tmp_path, forking):
    built = build_oci(LAYERS)
    path = write_oci_dir(str(tmp_path / "img"), built)
    bad = json.loads(built.manifest)["layers"][2]["digest"]
    blob = os.path.join(path, "blobs", "sha256", bad.split(":")[1])
    with open(blob, "r+b") as fh:  # same size, other bytes: the digest check must catch it
        fh.seek(-12, os.SEEK_END)
        fh.write(b"\0" * 8)
    cache = LayerCache(str(tmp_path / "cache"), "test")
    with pytest.raises(BadInputError, match=bad.split(":")[1][:12]):
        read("oci-dir:" + path, 2, cache=cache)
    assert multiprocessing.active_children() == []
    assert cache.get(bad) is None  # nothing cached from bytes that failed verification


def test_a_worker_that_dies_is_reported_not_waited_for(image_ref, forking):
    parent = os.getpid()

    def dying(image):
        def opener(layer):
            if layer.index == 1:
                assert os.getpid() != parent, "must run in a worker"
                os._exit(9)  # as the OOM killer would end it
            return image.opener(layer)

        return dataclasses.replace(image, opener=opener)

    with pytest.raises(UnavailableError, match="ended unexpectedly"):
        read(image_ref, 2, image_hook=dying)
    assert multiprocessing.active_children() == []


class RecordingProgress:
    def __init__(self):
        self.started, self.finished, self.bytes = {}, [], {}

    def layer_started(self, digest, size=None):
        self.started[digest] = size

    def layer_bytes(self, digest, n):
        assert digest in self.started
        self.bytes[digest] = self.bytes.get(digest, 0) + n

    def layer_finished(self, digest):
        self.finished.append(digest)


def test_progress_counts_the_bytes_workers_read(tmp_path, forking):
    built = build_oci(LAYERS)
    ref = "oci-dir:" + write_oci_dir(str(tmp_path / "img"), built)
    progress = RecordingProgress()
    _, stats = read(ref, 2, progress=progress)
    sizes = {l["digest"]: l["size"] for l in json.loads(built.manifest)["layers"]}
    assert stats.layer_processes == 2
    assert progress.started == sizes and progress.bytes == sizes  # compressed bytes, as transferred
    assert sorted(progress.finished) == sorted(sizes)


def test_in_threads_a_bad_layer_stops_the_layers_not_yet_started(tmp_path, monkeypatch):
    monkeypatch.setattr(reader, "can_fork", lambda: False)
    layers = [make_layer({f"opt/{i}.bin": os.urandom(50_000 * (6 - i))}) for i in range(6)]
    ref = "oci-dir:" + write_oci_dir(str(tmp_path / "img"), build_oci(layers))
    opened, slow = [], threading.Event()

    def failing(image):
        def opener(layer):
            opened.append(layer.index)
            if layer.index == 0:  # the largest, so taken first
                raise BadInputError("layer 0 is corrupt")
            slow.wait(1)  # the other worker is still busy when the error is seen
            return image.opener(layer)

        return dataclasses.replace(image, opener=opener)

    with pytest.raises(BadInputError, match="layer 0 is corrupt"):
        read(ref, 2, image_hook=failing)
    # the worker freed by the error may take one more layer before the queue is cancelled; the rest wait
    assert {0, 1} <= set(opened) <= {0, 1, 2}
