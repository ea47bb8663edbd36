"""Fast unit tests: catalog row -> ImageFacts, node-side search on hand-made facts, the shipped catalog's data."""

from __future__ import annotations

import dataclasses

import pytest
from engine_facts import replace_in
from recommend_helpers import matrix, node

from imgcheck.engine import evaluate
from imgcheck.recommend.convert import NotCheckable, facts_of_row
from imgcheck.recommend.node_path import node_paths

ROW = {
    "image": "example/fw",
    "release": "1.0",
    "framework": "pytorch",
    "distro": "ubuntu 22.04",
    "cuda": "12.4.1",
    "nccl": "2.21.5",
    "rdma_core": "39.0",
    "rdma_flavor": "inbox",
    "mlnx_ofed": None,
    "doca": None,
    "ucx": "1.15.0",
    "hpcx": "2.19",
    "min_driver": "545",
    "source": "test",
    "confidence": "reported",
}


def test_row_facts_follow_the_rdma_core_catalog():
    (f,) = facts_of_row(ROW, matrix())
    lib = f.rdma.libibverbs
    assert (lib.version, lib.private_abi, lib.has_reg_mr_iova2, lib.has_reg_dmabuf_mr) == ("1.14.39.0", 34, True, True)
    assert [(p.name, p.pabi, p.private_abi_needed) for p in f.rdma.providers] == [("mlx5", 34, 34)]
    (old,) = facts_of_row(dict(ROW, rdma_core="32.1"), matrix())
    # rdma-core v25..v32 share provider ABI 25; ibv_reg_dmabuf_mr arrived in v34, ibv_reg_mr_iova2 in v28
    assert (
        old.rdma.libibverbs.private_abi,
        old.rdma.libibverbs.has_reg_mr_iova2,
        old.rdma.libibverbs.has_reg_dmabuf_mr,
    ) == (25, True, False)
    assert f.nccl[0].version == "2.21.5" and f.cuda.version == "12.4.1" and f.os.id == "ubuntu"


def test_rows_without_the_deciding_facts_are_not_checkable():
    with pytest.raises(NotCheckable):
        facts_of_row(dict(ROW, rdma_core=None), matrix())
    with pytest.raises(NotCheckable):
        facts_of_row(dict(ROW, rdma_core="9999.0"), matrix())
    (none,) = facts_of_row(dict(ROW, rdma_core=None, rdma_flavor="none"), matrix())
    assert none.rdma.libibverbs is None
    readings = facts_of_row(dict(ROW, rdma_flavor=None, mlnx_ofed="23.10-1.1.9.0"), matrix())
    assert [r.rdma.flavor for r in readings] == ["inbox", "mlnx_ofed"]


def test_ofed_upgrade_path_for_newer_mlnx_userspace():
    """An image with MLNX_OFED 23.10 userspace on a MLNX_OFED 5.8 node: the vendor says the userspace must not
    be newer than the kernel stack; the path is the first OFED series that is not older than the image's."""
    (image,) = facts_of_row(dict(ROW, rdma_flavor="mlnx_ofed", mlnx_ofed="23.10-1.1.9.0"), matrix())
    n = node("mofed-5.8-proprietary-535-peermem")
    assert "OFED-USERSPACE-NEWER-THAN-KERNEL" in {f.id for f in evaluate(image, n, matrix()).findings}
    paths = node_paths(image, n, matrix())
    ofed = [p for p in paths if len(p.changes) == 1 and p.changes[0].startswith("MLNX_OFED 5.8-3.0.7.0 -> 23.10")]
    assert ofed, [p.changes for p in paths]


def test_memlock_path():
    (image,) = facts_of_row(ROW, matrix())
    n = replace_in(node("mofed-23.10-open-550-peermem"), "limits.memlock_kib", 64)
    assert "MEMLOCK-TOO-LOW" in {f.id for f in evaluate(image, n, matrix()).findings}
    paths = node_paths(image, n, matrix())
    assert paths and paths[0].changes == (
        "memlock limit 64 KiB -> unlimited (LimitMEMLOCK=infinity / ulimit -l unlimited for the job's processes)",
    )


def test_no_path_for_image_side_problems():
    """NCCL_IB_RETRY_CNT=8 baked into the image is wrong on every node: no node change can fix it."""
    (image,) = facts_of_row(ROW, matrix())
    image = dataclasses.replace(image, env={"NCCL_IB_RETRY_CNT": "8"})
    n = node("mofed-23.10-open-550-peermem")
    assert "ENV-NCCL-IB-RETRY-CNT" in {f.id for f in evaluate(image, n, matrix()).findings}
    assert node_paths(image, n, matrix()) == []


def test_shipped_catalog_rows_say_what_they_do_not_know():
    rows = matrix().rows("base_images")
    assert rows
    for row in rows:
        assert row["source"] and row["confidence"] in ("verified", "reported", "vendor-guidance", "hypothesis")
        if row["rdma_flavor"] != "none" and row["rdma_core"] is None:
            assert "note" in row, row["image"]
    plain_cuda = [r for r in rows if r["image"] == "nvcr.io/nvidia/cuda"]
    assert plain_cuda and all(r["rdma_flavor"] == "none" and "libibverbs" in r["note"] for r in plain_cuda)


def test_fleet_costs_one_evaluation_per_configuration(monkeypatch):
    """2,000 nodes in 20 configurations: each candidate reading is evaluated 20 times, not 2,000."""
    import fleetgen

    from imgcheck.engine import report as engine_report
    from imgcheck.recommend import recommend, shipped_entries

    calls = []
    real = engine_report.evaluate
    monkeypatch.setattr(engine_report, "evaluate", lambda *a: calls.append(1) or real(*a))
    (image,) = facts_of_row(dict(ROW, nccl="2.13.4"), matrix())
    nodes = fleetgen.fleet(2_000, 20)
    result = recommend(nodes, matrix(), current=image)
    readings = sum(len(e.readings) for e in shipped_entries(matrix()))
    # one per reading, one for the current image, and a few Env changes tried on a copy of it
    assert 0 < len(calls) <= (readings + 5) * 20
    assert result.nodes == tuple(n.name for n in nodes)
    for _, why in result.rejected:
        assert len(why) < 2_000  # node lists are shortened: "a, b, ... (+N more)"


def test_imported_catalog_rows_say_how_they_were_obtained():
    """Every row from the research import names its evidence and how it was obtained; nvidia/cuda tags carry
    NCCL from the distro package NVIDIA's Dockerfile pins and no libibverbs; torch wheel pins are PyPI's."""
    m = matrix()
    cuda = m.rows("cuda_images")
    assert len(cuda) == 402
    for row in cuda:
        assert row["rdma_flavor"] == "none" and "no libibverbs" in row["note"]
        assert row["source"].startswith("https://gitlab.com/nvidia/container-images/cuda/-/blob/")
        assert row["nccl_origin"] == ({"ubuntu": "dpkg"}.get(row["distro"].split()[0], "rpm") if row["nccl"] else None)
    ngc = [r for r in m.rows("base_images") if r.get("evidence")]
    # every month the research found, 25.03 from NVIDIA's TensorRT-LLM build script, 21.12 and 26.07 from the
    # images' own environment / build history; 20.06, 22.09, 23.10, 24.01, 24.03 and 26.08 from the images' environment and 21.04-21.06,
    # 21.10, 22.05, 22.10, 23.07, 23.11 and 26.03 from a sibling container's notes of the same month (issue 32)
    assert len([r for r in ngc if r["image"] == "nvcr.io/nvidia/pytorch"]) == 45
    for row in ngc:
        assert row["obtained"] and row["confidence"] in ("reported", "hypothesis")
        if row["evidence"] in ("secondary_paraphrase", "secondary_translation", "indirect"):
            assert row["confidence"] == "hypothesis"  # a paraphrase is not what NVIDIA wrote
    wheels = {r["torch"]: r for r in m.rows("torch_wheels")}
    assert wheels["2.5.1"]["nccl"] == "2.21.5" and wheels["2.7.0"]["nccl"] == "2.26.2"  # re-read with pip
    assert all(r["source"] == f"https://pypi.org/project/torch/{t}/" for t, r in wheels.items())
    # an nvidia/cuda tag as the engine sees it: NCCL from the package database, no libibverbs
    from imgcheck.recommend import shipped_entries

    entry = next(e for e in shipped_entries(m) if e.reference == "nvidia/cuda:12.4.1-runtime-ubuntu22.04")
    (facts,) = entry.readings
    assert facts.rdma.libibverbs is None and [(n.version, n.origin) for n in facts.nccl] == [("2.21.5", "dpkg")]


def test_pip_pins_are_newer_wheels_torch_releases_pin():
    """Never older than the wheel in the image or than torch's own pin (torch may call what an older NCCL lacks);
    nearest first; the conflict with torch's exact pin is said, except for the version torch itself requires."""
    from imgcheck.recommend.image_changes import loaded_nccl, pip_changes

    m = matrix()

    def pinned(row):
        (facts,) = facts_of_row(row, m)
        return [c.words.split("==", 1)[1].split(" ", 1)[0] for c in pip_changes(facts, loaded_nccl(facts), m)]

    row = dict(ROW, nccl="2.13.4", nccl_origin="pip")
    assert pinned(row)[:2] == ["2.18.1", "2.19.3"]  # no torch package: anything newer than the wheel
    with_torch = dict(row, framework_version="2.5.1")
    assert pinned(with_torch)[0] == "2.21.5" and "2.20.5" not in pinned(with_torch)
    (facts,) = facts_of_row(with_torch, m)
    first, second = pip_changes(facts, loaded_nccl(facts), m)[:2]
    assert "the version PyPI torch 2.5.1 itself requires" in first.words
    assert "requires nvidia-nccl-cu12==2.21.5 exactly, so pip reports the conflict" in second.words
    assert pinned(dict(ROW, nccl_origin="library")) == []  # a system libnccl is not a pip pin


def test_rank_same_base_then_framework_version_then_distro_then_python():
    from imgcheck.recommend.candidates import rank_key
    from imgcheck.recommend.catalog import imported_entry
    from imgcheck.recommend.framework import FrameworkWant
    from imgcheck.recommend.summary import summary_of_row

    m = matrix()

    def entry(image, release, **row):
        return imported_entry(dict(ROW, image=image, release=release, confidence="reported", source="test", **row), m)

    current = summary_of_row(dict(ROW, framework_version="2.5.1", python="3.10"))
    want = FrameworkWant("pytorch", None, "2.5.1")
    entries = [
        entry("other/fw", "1", framework_version="2.5.0", distro="rocky 9", python="3.10"),
        entry("other/fw", "2", framework_version="2.5.0", distro="ubuntu 22.04", python="3.12"),
        entry("other/fw", "3", framework_version="2.5.0", distro="ubuntu 22.04", python="3.10"),
        entry("other/fw", "4", framework_version="2.3.0", distro="ubuntu 22.04", python="3.10"),
        entry("team/base", "9", framework_version="2.1.0", distro="rocky 9", python="3.9"),
    ]
    ranked = sorted(entries, key=lambda e: rank_key(e, current, 0, want, "team/base:8"))
    assert [e.reference for e in ranked] == ["team/base:9", "other/fw:3", "other/fw:2", "other/fw:1", "other/fw:4"]


def test_nvidia_cuda_facts_say_they_have_no_libibverbs():
    from imgcheck.recommend import shipped_entries

    entry = next(e for e in shipped_entries(matrix()) if e.reference == "nvidia/cuda:12.8.1-devel-ubuntu24.04")
    (facts,) = entry.readings
    assert facts.notes[0] == "facts from compat_matrix/catalogs/cuda_images.json, not read from the image"
    assert any(
        n.startswith("no libibverbs: NVIDIA's Dockerfile installs libnccl2/libnccl-dev but no rdma-core")
        for n in facts.notes
    )
    assert [(n.version, n.origin) for n in facts.nccl] == [("2.25.1", "dpkg")]


def test_a_row_that_names_forward_compat_libcuda_decides_the_cuda_rule():
    """NGC PyTorch 25.10's history names its forward-compat libcuda (580.95.05): on an R570 node the engine
    decides CUDA 13 (floor 580) from it instead of leaving CUDA-DRIVER-TOO-OLD unknown."""
    from imgcheck.engine import build_report
    from imgcheck.recommend import shipped_entries

    entry = next(e for e in shipped_entries(matrix()) if e.reference == "nvcr.io/nvidia/pytorch:25.10-py3")
    assert {f.rdma.flavor for f in entry.readings} == {"inbox", "doca"}  # rdma-core 56.0 and DOCA 3.1.0 listed
    facts = entry.readings[0]
    assert (facts.cuda.version, facts.cuda.compat_driver) == ("13.0.2", "580.95.05")
    assert "cuda.compat_driver" not in facts.unknown
    report = build_report(facts, [node("inbox-6.8-open-570")], matrix())
    assert "CUDA-DRIVER-TOO-OLD" in {f.id for f in report.findings}
    assert "CUDA-DRIVER-TOO-OLD" not in {u.rule for u in report.unknowns}
