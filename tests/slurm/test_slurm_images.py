"""Real Debian rdma rootfs as an Enroot .sqsh (mksquashfs) and as a SIF: the same facts as docker-archive."""

from __future__ import annotations

import json
import shutil

import pytest
from imagebuild import file_sha256
from sifwriter import DATA_DEFFILE, DATA_GENERIC_JSON, DATA_PARTITION, Obj, write_sif

from imgcheck import api
from imgcheck.cli.main import main
from imgcheck.extractors.assemble import want_set
from imgcheck.model.serde import to_dict
from imgcheck.sources.base import SQUASHFS_LAYER as MEDIA_TYPE
from imgcheck.sources.enroot import enroot_source
from imgcheck.sources.read_options import ReadOptions
from imgcheck.view.layer_index import Limits, index_layer
from imgcheck.view.reader import ReadStats, index_image_layer

pytestmark = pytest.mark.e2e

# What the real images hold (see tests/conftest.py and the common brief)
EXPECTED = {
    "bullseye": {"os": "11", "libibverbs": "1.11.33.2", "rdma_core": "33.2", "pabi": 33, "ucx": "1.10"},
    "bookworm": {"os": "12", "libibverbs": "1.14.44.0", "rdma_core": "44.0", "pabi": 34, "ucx": "1.13.1"},
    "trixie": {"os": "13", "libibverbs": "1.14.56.1", "rdma_core": "56.1", "pabi": 34, "ucx": "1.18.1"},
}


def _strip_layers(value):
    if isinstance(value, dict):
        return {k: _strip_layers(v) for k, v in value.items() if k != "layer"}
    if isinstance(value, list):
        return [_strip_layers(v) for v in value]
    return value


def comparable(facts) -> dict:
    """Everything an extractor found; not how the image was transported or named."""
    doc = to_dict(facts)
    for key in ("reference", "digest", "platform", "layers", "notes"):
        doc.pop(key, None)
    return _strip_layers(doc)


def assert_real_facts(facts, suite: str) -> None:
    want = EXPECTED[suite]
    assert facts.os.id == "debian" and facts.os.version_id == want["os"]
    ib = facts.rdma.libibverbs
    assert (ib.version, ib.rdma_core, ib.private_abi) == (want["libibverbs"], want["rdma_core"], want["pabi"])
    mlx5 = [p for p in facts.rdma.providers if p.name == "mlx5"]
    assert mlx5 and mlx5[0].pabi == want["pabi"]
    assert facts.ucx is not None and facts.ucx.version.startswith(want["ucx"])
    assert any(p.name == "libibverbs1" and p.db == "dpkg" for p in facts.packages)


@pytest.mark.parametrize("suite", ["bookworm", "bullseye", "trixie"])
def test_enroot_sqsh_gives_the_same_facts_as_the_docker_archive(suite, debian_sqsh, debian_archive):
    sqsh = debian_sqsh(suite)
    from_sqsh = api.inspect_image(f"enroot:{sqsh}", ReadOptions(use_cache=False))
    from_archive = api.inspect_image(f"docker-archive:{debian_archive(suite)}", ReadOptions(use_cache=False))
    facts, reference = comparable(from_sqsh), comparable(from_archive)
    # Env: the archive's config has PATH; a plain mksquashfs of the rootfs has Debian's empty
    # /etc/environment (Enroot writes the config's Env there; see test_squashfs_reader)
    assert facts.pop("env") == {}
    reference.pop("env")
    assert facts == reference
    assert_real_facts(from_sqsh, suite)
    # one layer, named by the sha256 of the .sqsh file (what `sha256sum` prints)
    assert from_sqsh.digest == file_sha256(sqsh)
    assert [(l.digest, l.media_type) for l in from_sqsh.layers] == [(from_sqsh.digest, MEDIA_TYPE)]
    assert from_sqsh.rdma.libibverbs.layer == from_sqsh.digest


def test_squashfs_index_matches_the_tar_walk_of_the_same_rootfs(debian_sqsh, rootfs):
    """Same kept paths, kinds, bytes and symlink targets, and the same set of non-directory paths."""
    source = enroot_source(debian_sqsh("bookworm"))
    image = source.open()
    try:
        sq = index_image_layer(image, image.layers[0], want_set(), Limits())
    finally:
        source.close()
    with open(rootfs("bookworm"), "rb") as fh:
        tar = index_layer(fh, "sha256:" + "0" * 64, want_set(), Limits())
    assert sq.nondir_hashes == tar.nondir_hashes
    assert len(sq.nondir_hashes) > 5000
    assert set(sq.entries) == set(tar.entries)
    for path, entry in tar.entries.items():
        mine = sq.entries[path]
        assert (mine.kind, mine.size, mine.data, mine.linkname, mine.truncated) == (
            entry.kind,
            entry.size,
            entry.data,
            entry.linkname,
            entry.truncated,
        ), path
    assert any(e.data and e.path.endswith("libibverbs.so.1.14.44.0") for e in sq.entries.values())


def test_sif_wrapping_the_squashfs_gives_the_same_facts(debian_sqsh, debian_archive, tmp_path):
    sqsh = debian_sqsh("bookworm")
    oci_config = {
        "Env": [
            "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
            "NCCL_IB_HCA=mlx5",
            "CUDA_VERSION=12.4.1",
        ],
        "Cmd": ["/bin/bash"],
    }
    sif = write_sif(
        str(tmp_path / "rdma.sif"),
        [
            Obj(DATA_DEFFILE, data=b"bootstrap: docker\nfrom: debian:bookworm\n"),
            Obj(DATA_GENERIC_JSON, name="oci-config.json", data=json.dumps(oci_config).encode()),
            Obj(DATA_PARTITION, path=sqsh),
        ],
    )
    from_sif = api.inspect_image(f"sif:{sif}", ReadOptions(use_cache=False))
    from_archive = api.inspect_image(f"docker-archive:{debian_archive('bookworm')}", ReadOptions(use_cache=False))
    facts, reference = comparable(from_sif), comparable(from_archive)
    assert facts.pop("env") == {
        "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
        "NCCL_IB_HCA": "mlx5",
        "CUDA_VERSION": "12.4.1",
    }
    reference.pop("env")
    facts.pop("cuda"), reference.pop("cuda")  # CUDA_VERSION in Env is itself a CUDA fact
    assert facts == reference
    assert_real_facts(from_sif, "bookworm")
    assert from_sif.platform == "linux/amd64"  # from the partition descriptor's arch
    assert from_sif.digest == file_sha256(sqsh)  # the partition's bytes: the same squashfs
    assert from_sif.cuda is not None and from_sif.cuda.version == "12.4.1"


def test_cli_inspect_enroot_writes_json(debian_sqsh, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("IMGCHECK_HOME", str(tmp_path / "home"))
    out = tmp_path / "facts.json"
    code = main(["inspect", f"enroot:{debian_sqsh('bookworm')}", "-o", f"json={out}", "-q"])
    assert code == 0
    doc = json.loads(out.read_text())
    image = doc.get("image", doc)
    assert image["rdma"]["libibverbs"]["version"] == "1.14.44.0"
    assert image["rdma"]["libibverbs"]["private_abi"] == 34


def test_second_inspect_of_the_same_sqsh_comes_from_the_layer_cache(debian_sqsh, tmp_path, monkeypatch):
    monkeypatch.setenv("IMGCHECK_HOME", str(tmp_path / "home"))
    ref = f"enroot:{debian_sqsh('bullseye')}"
    first, second, third = ReadStats(), ReadStats(), ReadStats()
    a = api.inspect_image(ref, ReadOptions(stats=first))
    b = api.inspect_image(ref, ReadOptions(stats=second))
    assert first.layers_read == [a.digest] and not first.layers_cached
    assert second.facts_cached and not second.layers_read  # the whole image's facts, no layer read
    shutil.rmtree(api.facts_cache().dir)
    api.inspect_image(ref, ReadOptions(stats=third))
    assert third.layers_cached == [a.digest] and not third.layers_read
    assert comparable(a) == comparable(b)
