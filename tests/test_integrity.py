"""Integrity: every layer's uncompressed content must match its config's diff_id, and a tampered
image leaves nothing in any cache (per-layer or facts) that the genuine image would then be served.

The tampered images are the genuine config (so the genuine image ID / config digest, which the
facts cache is keyed on) with one layer swapped for another whose blob is named by its own true
digest: every blob digest verifies, only the diff_id check can catch it (containerd refuses such
an image at unpack: "failed to extract layer ... diff id mismatch").
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import tarfile

import pytest
from imagebuild import (
    BuiltImage,
    build_oci,
    compress,
    make_layer,
    sha256,
    write_oci_archive,
    write_oci_dir,
    write_tar_members,
)

from imgcheck import api
from imgcheck.cli.main import main
from imgcheck.errors import BadInputError
from imgcheck.sources.read_options import ReadOptions
from imgcheck.view.layer_index import Limits, index_layer
from imgcheck.view.reader import ReadStats
from imgcheck.view.wants import Want, WantSet

GENUINE = make_layer(
    {"etc/os-release": b'ID=debian\nVERSION_ID="12"\n', "usr/lib/x86_64-linux-gnu/libibverbs.so.1": b"\x7fELF genuine"}
)
FORGED = make_layer({"etc/os-release": b'ID=ubuntu\nVERSION_ID="24.04"\n'})
WANTS = WantSet((Want(r".*", content=True, max_bytes=1 << 16),))


def tampered_oci(compression: str | None = "gzip") -> tuple[BuiltImage, BuiltImage]:
    """(genuine, tampered): the tampered manifest names the forged blob; the config is the genuine one."""
    genuine = build_oci([GENUINE], compression=compression)
    forged_blob = compress(FORGED, compression)
    manifest = json.loads(genuine.manifest)
    manifest["layers"][0].update(digest=sha256(forged_blob), size=len(forged_blob))
    manifest_bytes = json.dumps(manifest, sort_keys=True).encode()
    blobs = {d: b for d, b in genuine.blobs.items() if d == sha256(genuine.config)}
    blobs[sha256(forged_blob)] = forged_blob
    return genuine, BuiltImage(config=genuine.config, manifest=manifest_bytes, blobs=blobs)


def docker25_archive(path: str, layer_blobs: list[bytes], config: bytes) -> str:
    """The `docker save` layout of Docker >= 25: OCI blobs/ plus manifest.json naming them."""
    names = ["blobs/sha256/" + hashlib.sha256(b).hexdigest() for b in layer_blobs]
    config_name = "blobs/sha256/" + hashlib.sha256(config).hexdigest()
    members = {
        config_name: config,
        **dict(zip(names, layer_blobs)),
        "manifest.json": json.dumps([{"Config": config_name, "RepoTags": ["t:latest"], "Layers": names}]).encode(),
        "oci-layout": b'{"imageLayoutVersion": "1.0.0"}',
    }
    return write_tar_members(path, members)


def cache_files(home: str) -> list[str]:
    return [os.path.join(b, f) for b, _d, fs in os.walk(os.path.join(home, "cache")) for f in fs]


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("IMGCHECK_HOME", str(tmp_path / "home"))
    return str(tmp_path / "home")


def _refused(reference: str, capsys) -> str:
    assert main(["inspect", reference]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "diff_id" in err, err
    return err


@pytest.mark.parametrize("compression", ["gzip", "zstd", None])
def test_oci_dir_layer_not_matching_diff_id_is_refused(tmp_path, home, capsys, compression):
    _genuine, tampered = tampered_oci(compression)
    _refused(f"oci-dir:{write_oci_dir(str(tmp_path / 'bad'), tampered)}", capsys)
    assert cache_files(home) == []


def test_oci_archive_layer_not_matching_diff_id_is_refused(tmp_path, home, capsys):
    _genuine, tampered = tampered_oci()
    _refused(f"oci-archive:{write_oci_archive(str(tmp_path / 'bad.tar'), tampered)}", capsys)
    assert cache_files(home) == []


def test_docker25_archive_tampered_does_not_poison_the_genuine(tmp_path, home, capsys):
    """Same config digest (the facts cache key) for both; the tampered one must not be cached."""
    genuine = build_oci([GENUINE], compression=None)
    bad = docker25_archive(str(tmp_path / "bad.tar"), [FORGED], genuine.config)
    good = docker25_archive(str(tmp_path / "good.tar"), [GENUINE], genuine.config)
    _refused(f"docker-archive:{bad}", capsys)
    assert cache_files(home) == []
    stats = ReadStats()
    facts = api.inspect_image(f"docker-archive:{good}", ReadOptions(stats=stats))
    assert facts.os.id == "debian" and not stats.facts_cached and stats.layers_cached == []
    # (the other way round is by design: a warm cache answers for the config digest, i.e. for the
    # genuine image the tampered archive names but which docker would refuse to load from it)


def test_docker25_archive_gzip_blob_is_checked_after_decompression(tmp_path, home):
    """A saved blob may be stored compressed: its diff_id is of the uncompressed tar."""
    genuine = build_oci([GENUINE], compression=None)
    good = docker25_archive(str(tmp_path / "good.tar"), [compress(GENUINE, "gzip")], genuine.config)
    assert api.inspect_image(f"docker-archive:{good}", ReadOptions(use_cache=False)).os.id == "debian"
    bad = docker25_archive(str(tmp_path / "bad.tar"), [compress(FORGED, "gzip")], genuine.config)
    with pytest.raises(BadInputError, match="diff_id"):
        api.inspect_image(f"docker-archive:{bad}", ReadOptions(use_cache=False))


def test_layer_cache_entry_of_a_blob_is_reused_only_for_its_verified_diff_id(tmp_path, home, capsys):
    """Blob X cached with diff_id D answers for (X, D) only: an image pairing X with another
    diff_id reads (and refuses) the layer instead of taking the cached index."""
    genuine = build_oci([GENUINE])
    oci = write_oci_dir(str(tmp_path / "good"), genuine)
    api.inspect_image(f"oci-dir:{oci}")
    config = json.loads(genuine.config)
    config["rootfs"]["diff_ids"] = [sha256(FORGED)]
    config["config"]["Env"] = ["X=other image id"]
    config_bytes = json.dumps(config).encode()
    manifest = json.loads(genuine.manifest)
    manifest["config"].update(digest=sha256(config_bytes), size=len(config_bytes))
    manifest_bytes = json.dumps(manifest).encode()
    blobs = {d: b for d, b in genuine.blobs.items() if d != sha256(genuine.config)}
    blobs[sha256(config_bytes)] = config_bytes
    other = write_oci_dir(
        str(tmp_path / "other"), BuiltImage(config=config_bytes, manifest=manifest_bytes, blobs=blobs)
    )
    stats = ReadStats()
    with pytest.raises(BadInputError, match="diff_id"):
        api.inspect_image(f"oci-dir:{other}", ReadOptions(stats=stats))
    assert stats.layers_cached == []


def test_index_layer_records_the_uncompressed_digest():
    idx = index_layer(
        io.BytesIO(compress(GENUINE, "gzip")),
        sha256(compress(GENUINE, "gzip")),
        WANTS,
        Limits(),
        diff_id=sha256(GENUINE),
    )
    assert idx.uncompressed_digest == sha256(GENUINE)
    with pytest.raises(BadInputError, match="diff_id"):
        index_layer(io.BytesIO(GENUINE), sha256(GENUINE), WANTS, Limits(), diff_id=sha256(FORGED))
