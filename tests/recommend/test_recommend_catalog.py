"""`imgcheck catalog add/list` on the real Debian rdma images (docker-archives and a real registry)."""

from __future__ import annotations

import json
import os

import pytest
from recommend_helpers import matrix, node, node_file, real_facts, renamed, with_nccl, write_facts
from registryfixture import registry  # noqa: F401  (session fixture: Debian's docker-registry on 127.0.0.1)
from registrypush import Pusher, push_rootfs_image

from imgcheck.cli.main import main
from imgcheck.recommend import local_entries, recommend

pytestmark = pytest.mark.e2e  # real Debian rdma images (mmdebstrap)


@pytest.fixture()
def home(tmp_path, monkeypatch):
    path = tmp_path / "home"
    monkeypatch.setenv("IMGCHECK_HOME", str(path))
    return path


def _list(capsys, *extra) -> dict:
    capsys.readouterr()
    assert main(["catalog", "list", "-o", "json", *extra]) == 0
    return json.loads(capsys.readouterr().out)


def test_catalog_add_real_debian_images_and_list(home, capsys, debian_archive):
    refs = [f"docker-archive:{debian_archive(s)}" for s in ("bullseye", "trixie")]
    assert main(["catalog", "add", *refs]) == 0
    out = capsys.readouterr().out
    assert "rdma-core 33.2 (PABI 33)" in out and "rdma-core 56.1 (PABI 34)" in out
    files = sorted(os.listdir(home / "catalog"))
    assert len(files) == 2 and not any(f.startswith(".") for f in files)  # atomic writes leave no temp files

    doc = _list(capsys, "--local")
    by_ref = {i["reference"]: i for i in doc["images"]}
    assert set(by_ref) == set(refs)
    bull, trixie = by_ref[refs[0]], by_ref[refs[1]]
    assert (bull["facts"]["rdma_core"], bull["facts"]["pabi"]) == ("33.2", 33)
    assert (trixie["facts"]["rdma_core"], trixie["facts"]["pabi"]) == ("56.1", 34)
    assert trixie["facts"]["ucx"].startswith("1.18.1") and bull["facts"]["ucx"].startswith("1.10")
    assert all(
        i["origin"] == "local" and i["confidence"] == "verified" and i["digest"].startswith("sha256:")
        for i in doc["images"]
    )

    # the full list also has the shipped rows, each with its source and confidence
    full = _list(capsys)["images"]
    shipped = [i for i in full if i["origin"] == "shipped"]
    assert shipped and all(
        i["source"] and i["confidence"] in ("verified", "reported", "vendor-guidance", "hypothesis") for i in shipped
    )
    cuda = next(i for i in shipped if i["reference"].startswith("nvcr.io/nvidia/cuda:"))
    assert cuda["facts"]["flavor"] == "none" and cuda["facts"]["rdma_core"] is None

    # adding the same image again replaces its entry (keyed by reference + digest)
    assert main(["catalog", "add", "-q", refs[1]]) == 0
    assert len(os.listdir(home / "catalog")) == 2


def test_locally_cataloged_image_is_recommended_and_checks_clean(home, capsys, tmp_path, debian_archive):
    """The inspected trixie image (rdma-core 56.1, DMA-BUF capable) is a candidate for a node where the
    current bullseye-based image fails; checking the recommended reference itself gives exit 0."""
    trixie = f"docker-archive:{debian_archive('trixie')}"
    assert main(["catalog", "add", "-q", trixie]) == 0
    current = renamed(with_nccl(real_facts(debian_archive("bullseye")), "2.13.4", cuda="12.4.1"), "team/app:old")
    # trixie has no torch: a team's own framework-less image stays a candidate, ranked after PyTorch images
    result = recommend([node("inbox-6.8-open-570")], matrix(), current=current, limit=20)
    local = [r for r in result.images if r.image.startswith(trixie)]
    assert local and "inspected" in local[0].why
    assert "rdma-core 33.2 -> 56.1" in local[0].differences
    assert local[0].image == trixie  # a docker-archive path takes no digest; registry references are pinned
    capsys.readouterr()
    assert main(["check", local[0].image, "--node-facts", node_file("inbox-6.8-open-570"), "-o", "json"]) == 0


@pytest.mark.registry
def test_catalog_add_from_a_real_registry(home, capsys, registry, rootfs):  # noqa: F811
    digest = push_rootfs_image(Pusher(registry.url), "rdma/bullseye", "v1", rootfs("bullseye"))
    ref = f"{registry.host}/rdma/bullseye:v1"
    assert main(["catalog", "add", "--no-cache", ref]) == 0
    entries, problems = local_entries()
    assert problems == [] and [(e.reference, e.digest) for e in entries] == [(ref, digest)]
    assert entries[0].summary.rdma_core == "33.2" and entries[0].release == "v1"
    # a plain rdma image is clean on an inbox node; recommended, it is pinned to the digest that was inspected
    images = [r.image for r in recommend([node("inbox-6.8-open-570")], matrix(), limit=100).images]
    assert f"{ref}@{digest}" in images


def test_catalog_errors_are_one_line(home, capsys, tmp_path):
    assert main(["catalog"]) == 2
    assert "catalog needs a verb" in capsys.readouterr().err
    assert main(["catalog", "add", f"docker-archive:{tmp_path / 'missing.tar'}"]) == 3
    assert not (home / "catalog").exists() or os.listdir(home / "catalog") == []  # nothing half-written
    # a damaged entry is reported and skipped; the rest of the catalog still lists
    os.makedirs(home / "catalog")
    (home / "catalog" / "broken.json").write_text("{nope")
    doc = _list(capsys)
    assert doc["images"] and len(doc["problems"]) == 1 and "broken.json" in doc["problems"][0]
    hand = write_facts(tmp_path / "f.json", _minimal_facts())
    assert main(["catalog", "add", "-q", f"facts:{hand}"]) == 0  # a facts file is an image too
    err = capsys.readouterr().err
    assert "Traceback" not in err


def _minimal_facts():
    from imgcheck.model.image import ImageFacts

    return ImageFacts(reference="example/hand-written:1")
