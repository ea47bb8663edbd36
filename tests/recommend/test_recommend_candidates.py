"""`recommend`: every recommended image is one the engine, run again on it, predicts clean on the same nodes;
when nothing fits the answer says so and gives a node-side path the engine confirms."""

from __future__ import annotations

import dataclasses
import json

import pytest
from engine_facts import replace_in
from recommend_helpers import matrix, node, node_file, real_facts, renamed, with_nccl, write_facts

from imgcheck import api
from imgcheck.cli.main import main
from imgcheck.engine import build_report
from imgcheck.recommend import recommend, shipped_entries

pytestmark = pytest.mark.e2e  # real Debian rdma images (mmdebstrap)


@pytest.fixture(autouse=True)
def _own_home(tmp_path, monkeypatch):
    """An empty local catalog per test (the session home is shared with other suites)."""
    monkeypatch.setenv("IMGCHECK_HOME", str(tmp_path / "home"))


@pytest.fixture(scope="module")
def bullseye_nccl_213(debian_archive):
    """Real bullseye rdma userspace (rdma-core 33.2: no ibv_reg_dmabuf_mr) + NCCL 2.13.4 + CUDA 12.4.1.

    On an inbox 6.8 node with the open GPU modules, NCCL 2.13 tries DMA-BUF, the image's libibverbs
    cannot register it, and 2.13 does not back off: DMABUF-UNSUPPORTED, an error (verdict fail)."""
    facts = with_nccl(real_facts(debian_archive("bullseye")), "2.13.4", cuda="12.4.1")
    return renamed(facts, "registry.example/team/trainer:old")


def _shipped(reference: str):
    return next(e for e in shipped_entries(matrix()) if e.reference == reference)


def test_recommended_images_come_out_clean_when_checked_again(tmp_path, bullseye_nccl_213):
    n = node("inbox-6.8-open-570")
    current = build_report(bullseye_nccl_213, [n], matrix())
    assert current.verdict == "fail" and "DMABUF-UNSUPPORTED" in {f.id for f in current.findings}

    result = recommend([n], matrix(), current=bullseye_nccl_213)
    assert result.images, result.message
    for rec in result.images:
        entry = _shipped(rec.image)
        # independent re-check: each reading of the catalog row, written as a facts file, through the public API
        for i, facts in enumerate(entry.readings):
            report = api.check_image(f"facts:{write_facts(tmp_path / f'cand{i}.json', facts)}", [n])
            assert report.verdict == "ok", (rec.image, [(f.id, f.severity) for f in report.findings])
        # the differences that matter, old -> new, from the current image
        assert f"rdma-core 33.2 -> {entry.summary.rdma_core}" in rec.differences
        assert "provider ABI (PABI) 33 -> 34" in rec.differences
    # the images that fail on this node are named with the reason, never recommended
    rejected = dict(result.rejected)
    # pytorch/pytorch tags carry the NCCL wheel but no libibverbs (their bases are ubuntu / nvidia/cuda)
    assert "RDMA-NO-LIBIBVERBS" in rejected["pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime"]
    # the current image runs torch: no other framework is offered or even judged
    assert all(
        _shipped(ref).summary.framework == "pytorch" for ref in list(rejected) + [r.image for r in result.images]
    )
    assert rejected["nvcr.io/nvidia/pytorch:19.10"].startswith("cannot be checked")
    recommended = {r.image for r in result.images}
    assert not recommended & set(rejected)


def test_failing_check_carries_recommendations(tmp_path, bullseye_nccl_213):
    """api.check_image adds recommendations to a failing report; each recommended image, checked, is clean."""
    path = write_facts(tmp_path / "current.json", bullseye_nccl_213)
    n = node("inbox-6.8-open-570")
    report = api.check_image(f"facts:{path}", [n])
    assert report.verdict == "fail"
    images = [r for r in report.recommendations if r.kind == "image"]
    assert images and all("predicts it clean" in r.why for r in images)
    for rec in images:
        for facts in _shipped(rec.image).readings:
            assert build_report(facts, [n], matrix()).verdict == "ok"
    # and the JSON contract carries them
    out = tmp_path / "report.json"
    assert main(["check", f"facts:{path}", "--node-facts", node_file("inbox-6.8-open-570"), "-o", f"json={out}"]) == 1
    doc = json.loads(out.read_text())
    assert [r["image"] for r in doc["recommendations"]] == [r.image for r in report.recommendations]


def test_a_clean_check_carries_no_recommendations(tmp_path, debian_archive):
    report = api.check_image(f"docker-archive:{debian_archive('trixie')}", [node("inbox-6.8-open-570")])
    assert report.verdict == "ok" and report.recommendations == ()


def test_no_candidate_fits_and_the_node_path_is_engine_confirmed(debian_archive):
    """Inbox kernel + proprietary GPU modules + no nvidia-peermem: every NCCL image in the catalog warns
    GDR-PEERMEM-MISSING (no DMA-BUF without the open modules, and inbox kernels cannot load peermem), and a
    plain CUDA image has no libibverbs at all. So no image fits; the node-side path is the open modules,
    which with trixie's rdma-core 56.1 on kernel 5.15 (>= 5.12) gives NCCL DMA-BUF."""
    current = with_nccl(real_facts(debian_archive("trixie")), "2.21.5", cuda="12.4.1")
    n = node("inbox-5.15-proprietary-535")
    assert "GDR-PEERMEM-MISSING" in {f.id for f in build_report(current, [n], matrix()).findings}

    result = recommend([n], matrix(), current=current)
    assert result.images == ()
    # the image runs torch: only pytorch images are judged, and every one that can be checked fails here
    assert result.message.startswith("no pytorch catalog image is predicted clean on gpu-inbox-515")
    # the NGC images fail only on the node's missing GPUDirect path; pytorch/pytorch tags lack libibverbs
    assert "fail only for node-side reasons (GDR-PEERMEM-MISSING)" in result.message
    assert "node-side path" in result.message
    assert result.node_upgrades
    paths = [r.differences for r in result.node_upgrades]
    assert any(len(p) == 1 and "open kernel modules" in p[0] for p in paths), paths
    assert not any("peermem" in d for p in paths for d in p)  # inbox kernels have no peer-memory API
    # re-check the proposal ourselves on a modified copy of the node
    fixed = replace_in(n, "gpu.kernel_module", "open")
    assert build_report(current, [fixed], matrix()).verdict == "ok"


def test_no_candidate_cli(tmp_path, capsys, debian_archive):
    current = with_nccl(real_facts(debian_archive("trixie")), "2.21.5", cuda="12.4.1")
    path = write_facts(tmp_path / "cur.json", current)
    capsys.readouterr()
    rc = main(
        ["recommend", "--node-facts", node_file("inbox-5.15-proprietary-535"), "--like", f"facts:{path}", "-o", "table"]
    )
    out = capsys.readouterr().out
    assert rc == 0  # something is recommended: the node-side path
    assert out.startswith("no pytorch catalog image is predicted clean on gpu-inbox-515")
    assert "Node-side path:" in out and "open kernel modules" in out
    assert "Images predicted clean" not in out


def test_no_node_change_fixes_the_image_but_one_fixes_a_catalog_image(debian_archive, tmp_path):
    """bullseye (rdma-core 33.2, no ibv_reg_dmabuf_mr) with NCCL on an inbox node: DMA-BUF needs a newer
    libibverbs and inbox kernels cannot load nvidia-peermem, so no node change fixes the image itself. Every
    catalog PyTorch image fails there only for a node-side reason, so the answer is the node change (open GPU
    kernel modules) together with the closest catalog image it makes clean, re-checked on the changed node."""
    current = renamed(with_nccl(real_facts(debian_archive("bullseye")), "2.21.5", cuda="12.4.1"), "team/old:1")
    n = node("inbox-5.15-proprietary-535")
    result = recommend([n], matrix(), current=current)
    assert result.images == ()
    assert "no node-side change imgcheck can model fixes the current image" in result.message
    assert result.node_upgrades and all(r.image != "team/old:1" for r in result.node_upgrades)
    first = result.node_upgrades[0]
    assert first.differences == ("switch the GPU driver to the open kernel modules (DMA-BUF export needs them)",)
    (facts,) = _shipped(first.image).readings
    assert build_report(facts, [replace_in(n, "gpu.kernel_module", "open")], matrix()).verdict == "ok"
    assert build_report(facts, [n], matrix()).verdict != "ok"
    path = write_facts(tmp_path / "cur.json", current)
    out = tmp_path / "rec.json"
    assert (
        main(
            [
                "recommend",
                "--node-facts",
                node_file("inbox-5.15-proprietary-535"),
                "--like",
                f"facts:{path}",
                "-o",
                f"json={out}",
            ]
        )
        == 0
    )
    assert [r["kind"] for r in json.loads(out.read_text())["recommendations"]][0] == "node-upgrade"


def test_driver_upgrade_path_for_an_old_driver(debian_archive):
    """R470 cannot run CUDA 12 (minor-version compatibility needs >= 525): the node path is the next driver
    branch in the matrix's driver->CUDA catalog, and the engine confirms it."""
    current = with_nccl(real_facts(debian_archive("bookworm")), "2.21.5", cuda="12.4.1")
    n = node("mofed-5.8-470-peermem")
    assert "CUDA-DRIVER-TOO-OLD" in {f.id for f in build_report(current, [n], matrix()).findings}
    result = recommend([n], matrix(), current=current, framework="pytorch")
    # the images offered respect the node's R470 branch: CUDA 11 (NGC 21.09..22.12), each clean when re-checked
    assert result.images
    for rec in result.images:
        (facts,) = _shipped(rec.image).readings
        assert facts.cuda.version.startswith("11.") and build_report(facts, [n], matrix()).verdict == "ok"
    first = result.node_upgrades[0].differences
    assert len(first) == 1 and first[0].startswith("GPU driver 470.199.02 -> branch 525")
    upgraded = replace_in(replace_in(n, "gpu.driver_version", "525.60.13"), "gpu.peermem.version", "525.60.13")
    assert "CUDA-DRIVER-TOO-OLD" not in {f.id for f in build_report(current, [upgraded], matrix()).findings}


def test_fleet_candidates_must_be_clean_on_every_node(bullseye_nccl_213):
    good, bad = node("inbox-6.8-open-570"), node("inbox-5.15-proprietary-535")
    alone = {r.image for r in recommend([good], matrix(), current=bullseye_nccl_213).images}
    both = recommend([good, bad], matrix(), current=bullseye_nccl_213)
    assert alone and "nvcr.io/nvidia/pytorch:24.05-py3" in alone
    # on the proprietary-module inbox node every NCCL image warns GDR-PEERMEM-MISSING: none fits the pair
    assert both.images == ()
    assert "GDR-PEERMEM-MISSING on gpu-inbox-515" in dict(both.rejected)["nvcr.io/nvidia/pytorch:24.05-py3"]


def test_ranking_follows_the_framework_version_then_cuda_major(debian_archive):
    """On a MLNX_OFED 23.10 node with peermem many NGC PyTorch images are clean. The order follows what the
    user runs: the torch version asked for (or the --like image's), nearest first; rows whose torch version
    the catalog does not know come after those it knows; CUDA major breaks ties after that."""
    h100 = node("mofed-23.10-open-550-peermem")  # A100s here: older NGC NCCL predates H100 (NCCL-TOO-OLD-FOR-GPU)
    n = dataclasses.replace(
        h100,
        gpu=dataclasses.replace(
            h100.gpu, gpus=tuple(dataclasses.replace(g, name="NVIDIA A100-SXM4-80GB") for g in h100.gpu.gpus)
        ),
    )
    base = real_facts(debian_archive("bookworm"))
    entries = {e.reference: e for e in shipped_entries(matrix())}
    version = lambda rec: entries[rec.image].summary.framework_version  # noqa: E731
    asked = recommend([n], matrix(), framework="pytorch==2.1", limit=20).images
    assert version(asked[0]).startswith("2.1.")  # NGC 23.08 ships torch 2.1.0a0
    # matching versions first, then rows whose torch version is unknown (could be 2.1), then other versions
    ranks = [0 if (version(r) or "").startswith("2.1.") else 1 if not version(r) else 2 for r in asked]
    assert ranks == sorted(ranks) and set(ranks) == {0, 1, 2}
    like = recommend([n], matrix(), current=with_nccl(base, "2.21.5", cuda="12.4.1"), limit=20).images  # torch 2.5.1
    assert version(like[0]).startswith("2.4.")  # the nearest torch the catalog knows to 2.5.1
    c11 = recommend([n], matrix(), current=with_nccl(base, "2.12.10", cuda="11.8.0"), limit=20).images
    unknown = [entries[r.image].summary.cuda.split(".")[0] for r in c11 if not version(r)]
    assert unknown == sorted(unknown, key=lambda m: m != "11")  # among equals, the same CUDA major first


def test_recommend_cli_table_and_bad_input(tmp_path, capsys, bullseye_nccl_213):
    path = write_facts(tmp_path / "cur.json", bullseye_nccl_213)
    rc = main(["recommend", "--node-facts", node_file("inbox-6.8-open-570"), "--like", f"facts:{path}", "-o", "table"])
    out = capsys.readouterr().out
    assert rc == 0 and "Images predicted clean (closest first):" in out and "nvcr.io/nvidia/pytorch:24.05-py3" in out
    assert main(["recommend"]) == 2
    assert "no nodes" in capsys.readouterr().err
    assert main(["recommend", "--node-facts", str(tmp_path / "missing.json")]) == 3
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    assert main(["recommend", "--node-facts", node_file("inbox-6.8-open-570"), "--like", f"facts:{bad}"]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.count("\n") == 2  # one line per failure


def test_unknown_flavor_must_be_clean_under_every_reading():
    """cuda-dl-base 26.03 lists rdma-core 56.0 and DOCA 3.2.0 without saying which built the libibverbs:
    it is checked both as upstream rdma-core and as DOCA userspace, and on an inbox node the DOCA reading
    warns MLNX-USERSPACE-ON-INBOX, so it is not recommended there."""
    entry = _shipped("nvcr.io/nvidia/cuda-dl-base:26.03")
    assert {f.rdma.flavor for f in entry.readings} == {"inbox", "doca"}
    n = dataclasses.replace(node("inbox-6.8-open-570"))
    n = replace_in(n, "gpu.driver_version", "580.65.06")  # CUDA 13 needs >= 580
    result = recommend([n], matrix())
    assert "MLNX-USERSPACE-ON-INBOX" in dict(result.rejected)["nvcr.io/nvidia/cuda-dl-base:26.03"]


def test_rules_suppressed_everywhere_do_not_rule_candidates_out(bullseye_nccl_213):
    """With GDR-PEERMEM-MISSING ignored (the user accepts host-staged transfers), the NCCL 2.11 image that only
    warns about it on this node (NCCL < 2.13 never uses DMA-BUF) becomes an acceptable candidate."""
    n = node("inbox-6.8-open-570")
    plain = {r.image for r in recommend([n], matrix(), current=bullseye_nccl_213).images}
    relaxed = {
        r.image
        for r in recommend(
            [n], matrix(), current=bullseye_nccl_213, limit=20, ignore_rules=frozenset({"GDR-PEERMEM-MISSING"})
        ).images
    }
    assert "nvcr.io/nvidia/pytorch:21.09-py3" not in plain and "nvcr.io/nvidia/pytorch:21.09-py3" in relaxed
