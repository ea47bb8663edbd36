"""Per-layer cache and parallel reads: what is read, not how fast."""

from __future__ import annotations

import os

from imagebuild import build_oci, make_layer, write_oci_dir

from imgcheck import api
from imgcheck.sources.read_options import ReadOptions
from imgcheck.view.cache import LayerCache
from imgcheck.view.reader import ReadStats

BASE = [
    make_layer({"etc/os-release": b"ID=debian\nVERSION_ID=12\n", "usr/lib/libibverbs.so.1.14.44.0": b"x" * 1000}),
    make_layer({"opt/a.txt": b"a" * 5000, "usr/lib/libnccl.so.2.21.5": b"n"}),
    make_layer({"etc/nccl.conf": b"NCCL_IB_TIMEOUT=20\n"}),
]


def inspect(ref, **kw):
    stats = ReadStats()
    facts = api.inspect_image(ref, ReadOptions(stats=stats, **kw))
    return facts, stats


def test_warm_recheck_reads_no_layer(tmp_path):
    ref = "oci-dir:" + write_oci_dir(str(tmp_path / "img"), build_oci(BASE))
    cold, s1 = inspect(ref)
    warm, s2 = inspect(ref)
    assert len(s1.layers_read) == 3 and s1.bytes_decompressed > 0 and not s1.facts_cached
    assert s2.facts_cached and s2.layers_read == [] and s2.layers_cached == [] and s2.bytes_decompressed == 0
    assert warm == cold


def test_layer_cache_serves_every_layer_without_the_facts_cache(tmp_path):
    import shutil

    ref = "oci-dir:" + write_oci_dir(str(tmp_path / "img"), build_oci(BASE))
    cold, _ = inspect(ref)
    shutil.rmtree(api.facts_cache().dir)
    warm, stats = inspect(ref)
    assert stats.layers_read == [] and len(stats.layers_cached) == 3 and not stats.facts_cached
    assert warm == cold


def test_facts_cache_keeps_the_reference_asked_for(tmp_path):
    built = build_oci(BASE)
    a = "oci-dir:" + write_oci_dir(str(tmp_path / "a"), built)
    b = "oci-dir:" + write_oci_dir(str(tmp_path / "b"), built)
    inspect(a)
    facts, stats = inspect(b)
    assert stats.facts_cached and facts.reference == b


def test_base_bump_reads_only_new_layer(tmp_path):
    inspect("oci-dir:" + write_oci_dir(str(tmp_path / "v1"), build_oci(BASE)))
    bumped = BASE[:2] + [make_layer({"etc/nccl.conf": b"NCCL_IB_TIMEOUT=22\n"})]
    facts, stats = inspect("oci-dir:" + write_oci_dir(str(tmp_path / "v2"), build_oci(bumped)))
    assert len(stats.layers_read) == 1 and len(stats.layers_cached) == 2
    assert facts.nccl_conf == {"NCCL_IB_TIMEOUT": "22"}


def test_no_cache_option_reads_everything(tmp_path):
    ref = "oci-dir:" + write_oci_dir(str(tmp_path / "img"), build_oci(BASE))
    inspect(ref)
    _, stats = inspect(ref, use_cache=False)
    assert len(stats.layers_read) == 3 and stats.layers_cached == []


def test_parallel_and_serial_reads_agree(tmp_path):
    ref = "oci-dir:" + write_oci_dir(str(tmp_path / "img"), build_oci(BASE, "zstd"))
    serial, _ = inspect(ref, use_cache=False, workers=1)
    parallel, _ = inspect(ref, use_cache=False, workers=3)
    assert serial == parallel


def test_damaged_cache_entry_is_a_miss_and_rebuilt(tmp_path):
    ref = "oci-dir:" + write_oci_dir(str(tmp_path / "img"), build_oci(BASE))
    first, _ = inspect(ref)
    import shutil

    shutil.rmtree(api.facts_cache().dir)  # so the layer cache is consulted
    cache = api.layer_cache()
    for path, _size, _mtime in cache.entries():
        with open(path, "wb") as fh:
            fh.write(b"garbage")
    again, stats = inspect(ref)
    assert again == first and len(stats.layers_read) == 3
    shutil.rmtree(api.facts_cache().dir)
    _, stats = inspect(ref)
    assert stats.layers_read == [] and len(stats.layers_cached) == 3


def test_cache_write_failure_leaves_no_temp_files(tmp_path):
    cache = LayerCache(str(tmp_path / "c"), "ns")
    os.makedirs(cache.dir)
    os.chmod(cache.dir, 0o500)  # root ignores modes; use a file where the directory must go
    os.chmod(cache.dir, 0o700)
    blocker = os.path.join(cache.dir, "sha256")
    with open(blocker, "w") as fh:
        fh.write("not a directory")
    from imgcheck.view.layer_index import LayerIndex

    assert cache.put("sha256:" + "a" * 64, LayerIndex(digest="sha256:" + "a" * 64)) is False
    assert sorted(os.listdir(cache.dir)) == ["sha256"]


def test_prune_keeps_most_recent(tmp_path):
    from imgcheck.view.layer_index import LayerIndex

    cache = LayerCache(str(tmp_path / "c"), "ns")
    for i in range(5):
        digest = f"sha256:{i:064x}"
        assert cache.put(digest, LayerIndex(digest=digest))
        path = cache._path(digest)
        os.utime(path, (1000 + i, 1000 + i))
    sizes = sum(s for _, s, _ in cache.entries())
    removed, _ = cache.prune(max_bytes=sizes * 2 // 5 + 1)
    assert removed == 3
    assert cache.get(f"sha256:{4:064x}") is not None and cache.get(f"sha256:{0:064x}") is None


def test_cache_cli_prune_empties(tmp_path, capsys, monkeypatch):
    from imgcheck.cli.main import main

    monkeypatch.setenv("IMGCHECK_HOME", str(tmp_path / "home"))
    ref = "oci-dir:" + write_oci_dir(str(tmp_path / "img"), build_oci(BASE))
    inspect(ref)
    assert main(["cache", "info"]) == 0
    out = capsys.readouterr().out
    assert "3 layers entries" in out and "1 facts entries" in out
    assert "3 files entries" in out  # each layer's file index (view/file_index.py)
    assert main(["cache", "prune"]) == 0
    assert "removed 7 entries" in capsys.readouterr().out
    _, stats = inspect(ref)
    assert len(stats.layers_read) == 3
    assert main(["cache", "prune", "--max-size", "lots"]) == 2


class RecordingProgress:
    def __init__(self):
        self.started, self.finished, self.bytes = [], [], 0

    def layer_started(self, digest, size=None):
        self.started.append((digest, size))

    def layer_bytes(self, digest, n):
        self.bytes += n

    def layer_finished(self, digest):
        self.finished.append(digest)


def test_progress_sees_every_streamed_layer_and_its_bytes(tmp_path):
    built = build_oci(BASE)
    ref = "oci-dir:" + write_oci_dir(str(tmp_path / "img"), built)
    progress = RecordingProgress()
    api.inspect_image(ref, ReadOptions(use_cache=False, progress=progress, workers=2))
    manifest = __import__("json").loads(built.manifest)
    sizes = {l["digest"]: l["size"] for l in manifest["layers"]}
    assert dict(progress.started) == sizes
    assert sorted(progress.finished) == sorted(sizes)
    assert progress.bytes == sum(sizes.values())  # compressed bytes, as transferred


def test_parallel_reads_from_one_archive_file(tmp_path):
    """Layers of an OCI archive / docker-archive are read concurrently through separate handles."""
    import gzip as gz

    from imagebuild import write_docker_archive, write_oci_archive

    layers = [
        make_layer({f"usr/lib/l{i}.txt": bytes([65 + i]) * 200_000, "etc/os-release": f"ID=l{i}\n".encode()})
        for i in range(4)
    ]
    oci = write_oci_archive(str(tmp_path / "img.tar"), build_oci(layers, "gzip"))
    da = write_docker_archive(str(tmp_path / "da.tar"), layers)
    with open(da, "rb") as src, gz.open(str(tmp_path / "da.tar.gz"), "wb") as dst:
        dst.write(src.read())
    for ref in (f"oci-archive:{oci}", f"docker-archive:{da}", f"docker-archive:{tmp_path / 'da.tar.gz'}"):
        serial, _ = inspect(ref, use_cache=False, workers=1)
        parallel, _ = inspect(ref, use_cache=False, workers=4)
        assert parallel == serial and parallel.os.id == "l3"


def test_an_extractor_upgrade_re_extracts_from_cached_layers(tmp_path, monkeypatch):
    # a new imgcheck whose extractors read kept files differently (EXTRACTOR_VERSION bumped, same wants): the
    # facts are extracted again, from the cached layer indexes, and no layer is read
    from imgcheck.extractors import identity

    ref = "oci-dir:" + write_oci_dir(str(tmp_path / "img"), build_oci(BASE))
    cold, _ = inspect(ref)
    monkeypatch.setattr(identity, "CACHE_NAMESPACE", f"upgraded\n{identity.WANTS_FINGERPRINT}")
    again, stats = inspect(ref)
    assert not stats.facts_cached and stats.layers_read == [] and len(stats.layers_cached) == 3
    assert again == cold
    # a walk or scanner that keeps something else (LAYER_READ_VERSION bumped, or other wants): every layer again
    monkeypatch.setattr(identity, "LAYER_CACHE_NAMESPACE", "layer-read upgraded")
    monkeypatch.setattr(identity, "CACHE_NAMESPACE", f"upgraded twice\n{identity.WANTS_FINGERPRINT}")
    _, stats = inspect(ref)
    assert len(stats.layers_read) == 3 and stats.layers_cached == []
