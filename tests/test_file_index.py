"""A re-read after the wants change reads only the wanted files (issue #39): what is read, not how fast.

A real Debian bookworm rdma rootfs (tests/rootfs.py, mmdebstrap) as one OCI layout layer. The first inspect keeps
the layer's file index (every member's data offset; for gzip from IMGCHECK_SEEK_INDEX_MIN, seek points taken by the cold inflate);
after a wants change the layer cache misses and the layer is served from that record: only seek ranges are read,
and the index and facts are those of a whole read. A damaged or inconsistent record reads the layer whole, with one
note.
"""

from __future__ import annotations

import contextlib
import dataclasses
import glob
import gzip
import json
import os

import pytest
from imagebuild import build_oci, write_oci_dir
from rootfs import build_rootfs

from imgcheck import api
from imgcheck.extractors import identity
from imgcheck.extractors.assemble import want_set
from imgcheck.formats.read_stats import render_read_stats
from imgcheck.model.serde import to_dict
from imgcheck.sources.read_options import ReadOptions, ReadStats
from imgcheck.sources.resolve import open_source, parse_image_ref
from imgcheck.view import file_index
from imgcheck.view.file_index import FileIndexStore, record_of
from imgcheck.view.layer_index import Limits
from imgcheck.view.reader import index_image_layer
from imgcheck.view.wants import ANY_DIRS, Want, WantSet

# what a new extractor might ask for: a file no current want keeps, and a library's bytes
NEW_WANTS = WantSet(
    want_set().wants
    + (
        Want(r"usr/share/doc/libc6/copyright", content=True),
        Want(ANY_DIRS + r"libm\.so\.6", content=True),
        Want(r"etc/debian_version", content=True),
        # a streaming scanner over files past any content limit: their bytes are fed from the seek point
        Want(ANY_DIRS + r"libperl\.so\.5\.[0-9]+\.[0-9]+", scan="fatbin"),
        Want(ANY_DIRS + r"libstdc\+\+\.so\.6\.[0-9.]+", scan="nccl"),
    )
)


@pytest.fixture(scope="module")
def bookworm_tar() -> bytes:
    with open(build_rootfs("bookworm"), "rb") as fh:
        return fh.read()


def _layout(tmp_path_factory, tar: bytes, compression: str) -> str:
    return "oci-dir:" + write_oci_dir(str(tmp_path_factory.mktemp("oci") / "img"), build_oci([tar], compression))


@pytest.fixture(scope="module")
def gzip_ref(tmp_path_factory, bookworm_tar) -> str:
    return _layout(tmp_path_factory, bookworm_tar, "gzip")


@pytest.fixture(scope="module")
def zstd_ref(tmp_path_factory, bookworm_tar) -> str:
    return _layout(tmp_path_factory, bookworm_tar, "zstd")


@pytest.fixture
def seek_points(monkeypatch):
    """Seek points for a test-sized layer (the default threshold is file_index.SEEK_MIN of gzip), taken by the one
    in-order inflate (view/zran.py), not by rapidgzip."""
    monkeypatch.setenv("IMGCHECK_SEEK_INDEX_MIN", "1")
    monkeypatch.delenv("IMGCHECK_PARALLEL_GZIP_MIN", raising=False)


@contextlib.contextmanager
def opened(ref: str):
    source = open_source(parse_image_ref(ref))
    try:
        yield source.open()
    finally:
        source.close()


def _indexes(ref: str):
    """(the record a whole read keeps, the new wants' index from it, the new wants' index from a whole read)."""
    with opened(ref) as image:
        (layer,) = image.layers
        first = index_image_layer(image, layer, want_set(), Limits())
        record = record_of(first, layer.digest, layer.size)
        assert record is not None
        again = index_image_layer(image, layer, NEW_WANTS, Limits(), record=record)
        whole = index_image_layer(image, layer, NEW_WANTS, Limits())
    return layer, record, again, whole


def test_new_wants_from_seek_points_equal_a_whole_read(gzip_ref, seek_points):
    layer, record, again, whole = _indexes(gzip_ref)
    assert record.compression == "gzip" and record.seek  # the cold inflate's seek points, kept with the members
    assert again.from_file_index and not again.read_notes
    assert again == whole  # every entry, kept byte, scan result, path hash, count and the diff_id
    assert again.entries["usr/share/doc/libc6/copyright"].data == whole.entries["usr/share/doc/libc6/copyright"].data
    assert any(p.endswith("libm.so.6") and e.data for p, e in again.entries.items())
    scanned = [
        e for p, e in again.entries.items() if e.kind != "symlink" and ("libperl.so.5." in p or "libstdc++.so.6." in p)
    ]
    # fed to the scanners from the seek points, not kept; the nccl scanner found libstdc++'s glibc needs
    assert len(scanned) == 2 and all(e.data is None for e in scanned) and any(e.scan for e in scanned)
    # only the seek ranges before the wanted files were read, not the layer
    assert layer.size and again.reread_compressed < layer.size * 0.4
    assert again.reread_bytes < whole.uncompressed_bytes * 0.1


def test_without_seek_points_the_stream_is_inflated_in_order(zstd_ref, gzip_ref, monkeypatch):
    # zstd: one frame cannot be entered in the middle; gzip without seek points: the same, in order
    monkeypatch.setenv("IMGCHECK_SEEK_INDEX_MIN", "0")
    for ref, kind in ((zstd_ref, "zstd"), (gzip_ref, "gzip")):
        _layer, record, again, whole = _indexes(ref)
        assert record.compression == kind and record.seek is None
        assert again.from_file_index and again == whole
        assert 0 < again.reread_bytes <= whole.uncompressed_bytes  # up to the last wanted file, no further


def _inspect(ref: str) -> tuple[dict, ReadStats, tuple[str, ...]]:
    stats = ReadStats()
    facts = api.inspect_image(ref, ReadOptions(stats=stats))
    return to_dict(dataclasses.replace(facts, notes=())), stats, facts.notes


def _bump_wants(monkeypatch, n: int) -> None:
    """What an upgrade with other wants does to the caches' keys (extractors/identity.py)."""
    monkeypatch.setattr(identity, "LAYER_CACHE_NAMESPACE", f"layer-read upgraded {n}")
    monkeypatch.setattr(identity, "CACHE_NAMESPACE", f"upgraded {n}")


def test_after_a_wants_change_only_seek_ranges_are_read(gzip_ref, seek_points, tmp_path, monkeypatch):
    monkeypatch.setenv("IMGCHECK_HOME", str(tmp_path / "home"))
    cold, s1, _ = _inspect(gzip_ref)
    assert len(s1.layers_read) == 1 and not s1.layers_reread
    assert len(glob.glob(str(tmp_path / "home/cache/files/*/sha256/*.findex.gz"))) == 1
    _bump_wants(monkeypatch, 1)
    again, s2, notes = _inspect(gzip_ref)
    assert s2.layers_reread == s1.layers_read and s2.bytes_decompressed == 0
    blob = s1.layers_read[0]
    with opened(gzip_ref) as image:
        size = image.layers[0].size or 0
    assert 0 < s2.bytes_reread_compressed < size * 0.4 and s2.bytes_reread < s1.bytes_decompressed * 0.1
    assert again == cold and not any("file index" in n for n in notes)
    assert "0 layers streamed (0.0 MB uncompressed), 1 re-read from its file index (only the wanted files" in (
        render_read_stats(s2)
    )
    assert blob in s2.layers_read  # still a layer read: the cache under the new key is filled from it
    _bump_wants(monkeypatch, 2)
    _, s3, _ = _inspect(gzip_ref)
    assert s3.layers_reread == [blob]  # the record outlives any number of wants changes


def test_a_damaged_file_index_reads_the_layer_whole_with_one_note(gzip_ref, seek_points, tmp_path, monkeypatch):
    monkeypatch.setenv("IMGCHECK_HOME", str(tmp_path / "home"))
    cold, _, _ = _inspect(gzip_ref)
    (path,) = glob.glob(str(tmp_path / "home/cache/files/*/sha256/*.findex.gz"))
    with open(path, "r+b") as fh:
        fh.seek(os.path.getsize(path) // 2)
        fh.write(b"\xff" * 64)
    _bump_wants(monkeypatch, 1)
    again, stats, notes = _inspect(gzip_ref)
    assert not stats.layers_reread and len(stats.layers_read) == 1 and stats.bytes_decompressed > 0
    assert again == cold
    assert len([n for n in notes if "file index" in n]) == 1
    assert os.path.exists(path)  # the whole read wrote a good record again
    _bump_wants(monkeypatch, 2)
    assert _inspect(gzip_ref)[1].layers_reread == stats.layers_read


def test_offsets_that_do_not_match_the_blob_read_it_whole(gzip_ref, seek_points, tmp_path, monkeypatch):
    # a record that decodes but lies: every data offset one block off. The tar header before each wanted file
    # is checked, so the layer is read whole, with one note, and the facts are a whole read's
    monkeypatch.setenv("IMGCHECK_HOME", str(tmp_path / "home"))
    cold, s1, _ = _inspect(gzip_ref)
    (root,) = glob.glob(str(tmp_path / "home/cache/files/*"))
    store = FileIndexStore(os.path.dirname(root), "")
    store.dir = root
    record = store.get(s1.layers_read[0])
    assert record is not None
    shifted = tuple((*m[:5], m[5] + 512, m[6]) for m in record.members)
    assert store.put(dataclasses.replace(record, members=shifted))
    _bump_wants(monkeypatch, 1)
    again, stats, notes = _inspect(gzip_ref)
    assert not stats.layers_reread and stats.bytes_decompressed > 0
    assert again == cold
    (note,) = [n for n in notes if "file index" in n]
    assert "does not match" in note


def test_cache_info_and_prune_know_file_indexes(gzip_ref, tmp_path, monkeypatch, capsys):
    from imgcheck.cli.main import main

    monkeypatch.setenv("IMGCHECK_HOME", str(tmp_path / "home"))
    _inspect(gzip_ref)
    assert main(["cache", "info"]) == 0
    assert "1 files entries" in capsys.readouterr().out
    assert main(["cache", "prune"]) == 0
    assert not glob.glob(str(tmp_path / "home/cache/files/*/sha256/*.findex.gz"))


def test_seek_points_are_bounded_by_construction(gzip_ref, seek_points, monkeypatch):
    # at most zran.MAX_POINTS windows per layer whatever its size: past it every other point is dropped and the
    # spacing doubled while the layer is inflated; the fewer points still serve new wants as a whole read does
    from imgcheck.view import reader, zran

    monkeypatch.setattr(zran, "MAX_POINTS", 3)
    monkeypatch.setattr(reader, "seek_spacing", lambda layer: file_index.SPAN)
    layer, record, again, whole = _indexes(gzip_ref)
    assert record.seek is not None
    count = int.from_bytes(record.seek[31:35], "little")
    assert 2 <= count <= 3 and len(record.seek) == 35 + count * (18 + zran.WINDOW)
    assert again.from_file_index and again == whole
    assert layer.size and again.reread_compressed < layer.size


def test_the_record_is_bounded(monkeypatch):
    # a layer of very many members keeps no file index (it is read whole after a wants change), not an unbounded one
    from imgcheck.view import file_index
    from imgcheck.view.tarwalk import TarHeader

    monkeypatch.setattr(file_index, "MAX_RECORD_BYTES", 10 * file_index.MEMBER_OVERHEAD)
    recorder = file_index.Recorder()
    for i in range(9):
        recorder.add(TarHeader(f"f{i}", b"0", 1, 0o644, ""), 512 * (i + 1))
    assert recorder.members is not None and len(recorder.members) == 9
    recorder.add(TarHeader("g" * 300, b"0", 1, 0o644, ""), 10_000)
    assert recorder.members is None


def _store_record(tmp_path, digest):
    (root,) = glob.glob(str(tmp_path / "home/cache/files/*"))
    store = FileIndexStore(os.path.dirname(root), "")
    store.dir = root
    record = store.get(digest)
    assert record is not None and record.seek
    return store, record


@pytest.mark.parametrize("damage", ["points", "bits"])
def test_a_tampered_seek_index_reads_the_layer_whole(gzip_ref, seek_points, tmp_path, monkeypatch, capfd, damage):
    # offsets out of order or past the blob are refused by the index's structure check (points); a point entered at
    # the wrong bit inflates garbage or fails, which the inflate or the tar header before the first wanted file
    # catches (bits). Either way: a whole read, one note, nothing on stderr. (A window rewritten with other bytes is
    # refused by the record's sha256, the test above; here the record is re-written whole, its sha256 with it.)
    monkeypatch.setenv("IMGCHECK_HOME", str(tmp_path / "home"))
    cold, s1, _ = _inspect(gzip_ref)
    store, record = _store_record(tmp_path, s1.layers_read[0])
    seek = bytearray(record.seek)
    count = int.from_bytes(seek[31:35], "little")
    points_end = 35 + 18 * count
    if damage == "points":
        seek[35 + 18 : points_end] = bytes(b ^ 0x5A for b in seek[35 + 18 : points_end])
    else:  # every point one bit off where its block starts
        for k in range(count):
            at = 35 + 18 * k + 16
            seek[at] = (seek[at] + 1) % 8
    assert store.put(dataclasses.replace(record, seek=bytes(seek)))
    capfd.readouterr()
    _bump_wants(monkeypatch, 1)
    again, stats, notes = _inspect(gzip_ref)
    assert not stats.layers_reread and again == cold
    (note,) = [n for n in notes if "file index" in n]
    assert "does not match" in note and "\n" not in note
    assert capfd.readouterr().err == ""


@pytest.mark.parametrize("where", ["windows", "members"])
def test_a_record_damaged_under_a_valid_gzip_is_refused_by_its_sha256(
    gzip_ref, seek_points, tmp_path, monkeypatch, where
):
    # damage the gzip CRC cannot see (the record rewritten whole, e.g. bytes changed before they were compressed):
    # every seek point's window, which no tar header check reaches, or a member's recorded size. The sha256 the
    # record's first line holds no longer matches: a whole read, one note, the facts of a cold read
    monkeypatch.setenv("IMGCHECK_HOME", str(tmp_path / "home"))
    cold, s1, _ = _inspect(gzip_ref)
    (path,) = glob.glob(str(tmp_path / "home/cache/files/*/sha256/*.findex.gz"))
    with gzip.open(path, "rb") as fh:
        first, head = fh.readline(), fh.readline()
        rest = bytearray(fh.read())
    assert b'"sha256"' in first
    if where == "windows":
        seek_bytes = json.loads(head)["seek_bytes"]
        count = int.from_bytes(rest[31:35], "little")
        windows = 35 + 18 * count
        assert windows < seek_bytes
        rest[windows:seek_bytes] = bytes(b ^ 0x21 for b in rest[windows:seek_bytes])
    else:
        doc = json.loads(head)
        doc["members"][-1][2] += 1  # the last member's size
        head = json.dumps(doc, separators=(",", ":")).encode() + b"\n"
    with gzip.open(path, "wb") as fh:
        fh.write(first + head + bytes(rest))
    _bump_wants(monkeypatch, 1)
    again, stats, notes = _inspect(gzip_ref)
    assert not stats.layers_reread and len(stats.layers_read) == 1 and again == cold
    (note,) = [n for n in notes if "file index" in n]
    assert "damaged" in note and "sha256" in note


@pytest.fixture(scope="module")
def tar_ref(tmp_path_factory, bookworm_tar) -> str:
    return _layout(tmp_path_factory, bookworm_tar, None)


@pytest.mark.parametrize("kind", ["oci-dir", "docker-archive"])
def test_an_uncompressed_layer_is_read_where_the_wanted_files_lie(kind, tar_ref, debian_archive):
    # a plain tar blob of an OCI layout, and a layer tar inside a `docker save` archive: no inflate, each wanted
    # file (and the header before it) read by offset, nothing else
    ref = tar_ref if kind == "oci-dir" else f"docker-archive:{debian_archive('bookworm')}"
    layer, record, again, whole = _indexes(ref)
    assert record.compression == "tar" and record.seek is None
    assert again.from_file_index and not again.read_notes and again == whole
    wanted = sum(e.size for e in again.entries.values() if e.kind == "file")
    assert layer.size and again.reread_bytes < layer.size * 0.1
    assert again.reread_bytes <= wanted + 512 * len(again.entries)  # the files and their headers only


def test_a_symlink_target_no_want_keeps_is_read_from_the_file_index(tmp_path, monkeypatch):
    # libibverbs.so.1 -> a file under a path no want matches: its layer is read a second time keeping that file.
    # The first read has just written the layer's file index, so the second reads only that file.
    from imagebuild import Symlink, make_layer, write_docker_archive

    monkeypatch.setenv("IMGCHECK_HOME", str(tmp_path / "home"))
    lower = make_layer(
        {"etc/os-release": b'ID=debian\nVERSION_ID="12"\n', "opt/vendor/blob/verbs-impl": b"\x7fELF" + b"\0" * 200}
    )
    upper = make_layer({"usr/lib/x86_64-linux-gnu/libibverbs.so.1": Symlink("/opt/vendor/blob/verbs-impl")})
    archive = write_docker_archive(str(tmp_path / "img.tar"), [lower, upper])
    stats = ReadStats()
    facts = api.inspect_image(f"docker-archive:{archive}", ReadOptions(stats=stats, workers=1))
    assert facts.rdma.libibverbs is not None
    assert len(stats.layers_read) == 3 and len(stats.layers_reread) == 1  # both layers, then the lower one again
    assert stats.bytes_reread <= 2 * 512 + 4 * 1024  # that file and its header, not the layer
