"""The smallest change first, whatever its kind: an Env edit, a pip pin of the NCCL wheel, another image, or the
node-side change. Every proposal is re-checked here independently: the change applied by hand to the facts
(image or node), then the engine run again through the public API, must give a clean report."""

from __future__ import annotations

import dataclasses
import json

import pytest
from engine_facts import replace_in
from recommend_helpers import matrix, node, node_file, real_facts, renamed, with_nccl, write_facts

from imgcheck import api
from imgcheck.cli.main import main
from imgcheck.engine import build_report
from imgcheck.model.report import REPORT_SCHEMA_VERSION
from imgcheck.recommend import recommend, shipped_entries

pytestmark = pytest.mark.e2e  # real Debian rdma images (mmdebstrap)


@pytest.fixture(autouse=True)
def _own_home(tmp_path, monkeypatch):
    monkeypatch.setenv("IMGCHECK_HOME", str(tmp_path / "home"))


def _shipped(reference: str):
    return next(e for e in shipped_entries(matrix()) if e.reference == reference)


def _clean(facts, n) -> bool:
    report = build_report(facts, [n], matrix())
    return not [f for f in report.findings if f.severity in ("error", "warning")]


def test_env_removal_comes_first_and_the_check_report_shows_it(tmp_path, debian_archive):
    """NCCL_IB_RETRY_CNT=16 baked into an otherwise good image (bookworm rdma-core 44, NCCL 2.21.5 wheel) on a
    MLNX_OFED 23.10 node: removing the variable is the smallest change, smaller than any other image, and it is
    what `imgcheck check` shows first (table and JSON)."""
    current = renamed(
        with_nccl(real_facts(debian_archive("bookworm")), "2.21.5", env={"NCCL_IB_RETRY_CNT": "16"}),
        "registry.example/team/train:v7",
    )
    n = node("mofed-23.10-open-550-peermem")
    assert "ENV-NCCL-IB-RETRY-CNT" in {f.id for f in build_report(current, [n], matrix()).findings}

    result = recommend([n], matrix(), current=current)
    first = result.recommendations[0]
    assert first.kind == "env" and first.image == current.reference
    assert first.differences == ("remove NCCL_IB_RETRY_CNT=16 from the image's ENV (NCCL's default applies)",)
    assert "checked against gpu-mofed2310 (node facts collected 2026-11-30T08:00:00Z)" in first.why
    assert "https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html" in first.why
    fixed = dataclasses.replace(current, env={k: v for k, v in current.env.items() if k != "NCCL_IB_RETRY_CNT"})
    assert _clean(fixed, n)
    # image candidates still follow (a newer base), after the change that keeps the image
    assert [r.kind for r in result.recommendations].index("env") < [r.kind for r in result.recommendations].index(
        "image"
    )

    path = write_facts(tmp_path / "cur.json", current)
    report = api.check_image(f"facts:{path}", [n])
    assert report.verdict == "fail" and 1 <= len(report.recommendations) <= 2
    assert report.recommendations[0].kind == "env"
    out = tmp_path / "r.json"
    assert (
        main(
            [
                "check",
                f"facts:{path}",
                "--node-facts",
                node_file("mofed-23.10-open-550-peermem"),
                "-o",
                f"json={out}",
                "-o",
                f"markdown={tmp_path / 'r.md'}",
            ]
        )
        == 1
    )
    doc = json.loads(out.read_text())
    assert doc["schema_version"] == REPORT_SCHEMA_VERSION and doc["recommendations"][0]["kind"] == "env"
    assert "env change: `registry.example/team/train:v7`" in (tmp_path / "r.md").read_text()


def test_cumem_env_on_an_old_driver_branch(debian_archive):
    """R470 + MLNX_OFED 5.8 + nvidia-peermem, a CUDA 12 image with forward-compat libcuda 535: NCCL 2.27 uses
    cuMem buffers through peer memory without asking for VMM GPUDirect RDMA support (CUMEM-OLD-DRIVER, a
    hypothesis; NCCL 2.19 - 2.23 ask, issue 34). With the forward-compat warning
    accepted (--ignore), NCCL_CUMEM_ENABLE=0 is the change; without it, the engine shows no Env edit is
    enough and the node-side answer is the driver branch (the R470 limit is respected)."""
    current = with_nccl(real_facts(debian_archive("bookworm")), "2.27.3", compat="535.104.05")
    n = node("mofed-5.8-470-peermem")
    ids = {f.id for f in build_report(current, [n], matrix()).findings}
    assert {"CUMEM-OLD-DRIVER", "CUDA-DRIVER-TOO-OLD"} <= ids

    accepted = recommend([n], matrix(), current=current, ignore_rules=frozenset({"CUDA-DRIVER-TOO-OLD"}))
    env = [r for r in accepted.image_changes if r.kind == "env"]
    assert env and env[0].differences == ("set NCCL_CUMEM_ENABLE=0 in the image's ENV (or the job's environment)",)
    assert "CUMEM-OLD-DRIVER" in env[0].why
    fixed = dataclasses.replace(current, env=dict(current.env, NCCL_CUMEM_ENABLE="0"))
    assert "CUMEM-OLD-DRIVER" not in {f.id for f in build_report(fixed, [n], matrix()).findings}

    strict = recommend([n], matrix(), current=current)
    assert not any("NCCL_CUMEM_ENABLE" in d for r in strict.image_changes for d in r.differences)
    assert strict.node_upgrades[0].differences[0].startswith("GPU driver 470.199.02 -> branch 525")
    for rec in strict.images:  # images offered on R470 are CUDA 11 ones
        (facts,) = _shipped(rec.image).readings
        assert facts.cuda.version.startswith("11.")


def test_pip_pin_when_the_nccl_wheel_is_the_only_problem(debian_archive):
    """NCCL 2.13.4 from the pip wheel with bullseye's rdma-core 33.2 on a DOCA node with the open GPU modules:
    2.13 tries DMA-BUF and does not back off (DMABUF-UNSUPPORTED), and looks for peer memory only where DOCA no
    longer puts it. A newer nvidia-nccl-cu12 (one a PyPI torch release pins) fixes both; a system libnccl
    gets no pip pin."""
    current = with_nccl(real_facts(debian_archive("bullseye")), "2.13.4", origin="pip")
    n = node("doca-24.10-open-580-peermem")
    assert "DMABUF-UNSUPPORTED" in {f.id for f in build_report(current, [n], matrix()).findings}

    result = recommend([n], matrix(), current=current)
    pins = [r for r in result.image_changes if r.kind == "pip-pin"]
    assert pins, result.message
    (words,) = pins[0].differences
    version = words.split("==", 1)[1].split(" ", 1)[0]
    pinned_by = {r["nccl"] for r in matrix().rows("torch_wheels") if r["nccl_pip_package"] == "nvidia-nccl-cu12"}
    assert words.startswith("pip install nvidia-nccl-cu12==") and version in pinned_by
    assert "https://pypi.org/project/torch/" in pins[0].why
    repinned = dataclasses.replace(current, nccl=tuple(dataclasses.replace(x, version=version) for x in current.nccl))
    assert _clean(repinned, n)
    # the same NCCL as a system library: nothing for pip to pin
    system = with_nccl(real_facts(debian_archive("bullseye")), "2.13.4", origin="library")
    assert not [r for r in recommend([n], matrix(), current=system).image_changes if r.kind == "pip-pin"]


def test_doca_open_node_framework_answers_are_sourced_and_engine_checked(tmp_path, capsys):
    """DOCA 24.10 + open modules + R580: `recommend --framework pytorch` offers only PyTorch images, each with
    its source and confidence, each clean when its catalog facts are checked again through the API."""
    n = node("doca-24.10-open-580-peermem")
    capsys.readouterr()
    out = tmp_path / "rec.json"
    assert (
        main(
            [
                "recommend",
                "--node-facts",
                node_file("doca-24.10-open-580-peermem"),
                "--framework",
                "pytorch",
                "-o",
                f"json={out}",
            ]
        )
        == 0
    )
    doc = json.loads(out.read_text())
    images = [r for r in doc["recommendations"] if r["kind"] == "image"]
    assert images
    for i, rec in enumerate(images):
        entry = _shipped(rec["image"])
        # every catalog entry now has an undecided rule or two here (issue 31: facts the catalog does not record
        # are asked, never passed), so the newest tags rank first; some cite a public file, not a URL
        assert entry.summary.framework == "pytorch" and entry.source
        assert f"({entry.confidence}: {entry.source})" in rec["why"]
        assert "checked against gpu-doca2410-open" in rec["why"]
        for j, facts in enumerate(entry.readings):
            report = api.check_image(f"facts:{write_facts(tmp_path / f'c{i}-{j}.json', facts)}", [n])
            assert report.verdict == "ok", rec["image"]
    assert not [r for r in doc["rejected"] if not _shipped(r["image"]).summary.framework == "pytorch"]


def test_inbox_node_without_peer_memory_says_the_fix_is_on_the_node(tmp_path, capsys):
    """Inbox kernel, proprietary GPU modules, no nvidia-peermem: no catalog PyTorch image can have GPUDirect
    there. Without --like the answer still says so and gives the node-side change with the image it makes
    clean, re-checked on the changed node facts."""
    n = node("inbox-5.15-proprietary-535")
    result = recommend([n], matrix(), framework="pytorch")
    assert result.images == ()
    assert "fail only for node-side reasons (GDR-PEERMEM-MISSING)" in result.message
    rec = result.node_upgrades[0]
    assert rec.kind == "node-upgrade" and rec.differences == (
        "switch the GPU driver to the open kernel modules (DMA-BUF export needs them)",
    )
    (facts,) = _shipped(rec.image).readings
    assert _shipped(rec.image).summary.framework == "pytorch"
    assert build_report(facts, [replace_in(n, "gpu.kernel_module", "open")], matrix()).verdict == "ok"
    capsys.readouterr()
    assert (
        main(
            [
                "recommend",
                "--node-facts",
                node_file("inbox-5.15-proprietary-535"),
                "--framework",
                "pytorch",
                "-o",
                "table",
            ]
        )
        == 0
    )
    text = capsys.readouterr().out
    assert text.startswith("no pytorch catalog image is predicted clean on gpu-inbox-515")
    assert "Node-side path:" in text and "open kernel modules" in text


def test_framework_version_is_what_ranks_first_and_bad_specs_are_usage_errors(capsys):
    n = node("mofed-23.10-open-550-peermem")
    top = recommend([n], matrix(), framework="pytorch==2.4").images[0]
    assert _shipped(top.image).summary.framework_version.startswith("2.4.")
    assert (
        main(["recommend", "--node-facts", node_file("mofed-23.10-open-550-peermem"), "--framework", "pytorch==two"])
        == 2
    )
    err = capsys.readouterr().err
    assert "not a version specifier" in err and "Traceback" not in err and err.count("\n") == 1


def test_like_a_pytorch_facts_file_on_the_old_driver_node(tmp_path, capsys, debian_archive):
    """`recommend --like facts:FILE` for a CUDA 12 PyTorch image on R470 + MLNX_OFED 5.8: the node-side answer
    is the driver branch, and the images offered instead are CUDA 11 PyTorch images the R470 branch runs."""
    current = with_nccl(real_facts(debian_archive("bookworm")), "2.21.5")
    path = write_facts(tmp_path / "cur.json", current)
    out = tmp_path / "rec.json"
    assert (
        main(
            [
                "recommend",
                "--node-facts",
                node_file("mofed-5.8-470-peermem"),
                "--like",
                f"facts:{path}",
                "-o",
                f"json={out}",
            ]
        )
        == 0
    )
    recs = json.loads(out.read_text())["recommendations"]
    kinds = [r["kind"] for r in recs]
    assert "image" in kinds and "node-upgrade" in kinds and kinds.index("image") < kinds.index("node-upgrade")
    for rec in (r for r in recs if r["kind"] == "image"):
        entry = _shipped(rec["image"])
        assert entry.summary.framework == "pytorch" and entry.summary.cuda.startswith("11.")
        assert "CUDA 12.4.1 -> 11." in " ".join(rec["differences"])
    driver = next(r for r in recs if r["kind"] == "node-upgrade")
    assert driver["differences"][0].startswith("GPU driver 470.199.02 -> branch 525")


def test_a_tag_of_the_same_base_comes_before_other_images():
    """Running NGC PyTorch 21.09 (NCCL 2.11: no DMA-BUF) on an inbox 6.8 node with the open modules and no
    peermem: a newer tag of the same image (22.09, NCCL 2.15 uses DMA-BUF; the nearest newer tag) is the answer, said as such. On
    R470 the same image's *older* CUDA 11 tags are what works for a 23.04 user (CUDA 12 needs R525+)."""
    old = _shipped("nvcr.io/nvidia/pytorch:21.09-py3").readings[0]
    n = node("inbox-6.8-open-570")
    assert "GDR-PEERMEM-MISSING" in {f.id for f in build_report(old, [n], matrix()).findings}
    first = recommend([n], matrix(), current=old).images[0]
    assert first.image == "nvcr.io/nvidia/pytorch:22.09-py3"
    assert first.why.startswith("a newer tag of the same base image: ")
    assert "NCCL 2.11.4 -> 2.15.1" in first.differences
    assert _clean(_shipped(first.image).readings[0], n)

    # a team's own image built FROM it: NGC's NVIDIA_PYTORCH_VERSION in the inherited Env names the base
    team = dataclasses.replace(
        old, reference="registry.example/team/train:v1", env=dict(old.env, NVIDIA_PYTORCH_VERSION="21.09")
    )
    first = recommend([n], matrix(), current=team).images[0]
    assert first.image == "nvcr.io/nvidia/pytorch:22.09-py3"
    assert first.why.startswith(
        "a newer tag of the same base image nvcr.io/nvidia/pytorch:21.09 (NVIDIA_PYTORCH_VERSION=21.09 in its Env): "
    )

    r470 = node("mofed-5.8-470-peermem")
    current = _shipped("nvcr.io/nvidia/pytorch:23.04-py3").readings[0]
    images = recommend([r470], matrix(), current=current).images
    assert images and all(
        r.why.startswith(("another tag of the same base image: ", "a newer tag of the same base image: "))
        for r in images
    )
    # the catalog does not say whether an NGC image ships forward-compat libcuda: CUDA 12 on R470 is undecided,
    # so the CUDA 11 tags the engine decides clean come first, and the others say what is undecided
    decided = [r for r in images if "still undecided" not in r.why]
    assert decided and list(images[: len(decided)]) == decided
    assert all(_shipped(r.image).summary.cuda.startswith("11.") for r in decided)
    # the rest say what is undecided: CUDA 12 tags whether they run on R470 at all; CUDA 11 tags (natively run
    # by R470) only whether the image itself puts an older forward-compat libcuda on its loader path (issue 31)
    for r in images[len(decided) :]:
        cuda12 = _shipped(r.image).summary.cuda.startswith("12.")
        assert ("CUDA-DRIVER-TOO-OLD" in r.why) == cuda12, r.image
        assert "CUDA-COMPAT-OLDER-THAN-DRIVER-ON-PATH" in r.why or cuda12, r.image


def test_load_nvidia_peermem_on_a_mlnx_ofed_node(debian_archive):
    """MLNX_OFED 5.8 (peer-memory API present) with the proprietary R535 modules and nvidia-peermem not loaded:
    no catalog PyTorch image has GPUDirect there (no DMA-BUF without the open modules), and the node-side
    answer for the current image is the one-line change, loading nvidia-peermem, which the engine confirms."""
    n = replace_in(
        replace_in(node("mofed-5.8-proprietary-535-peermem"), "gpu.peermem.loaded", False), "gpu.peermem.version", None
    )
    current = with_nccl(real_facts(debian_archive("bookworm")), "2.21.5")
    assert "GDR-PEERMEM-MISSING" in {f.id for f in build_report(current, [n], matrix()).findings}
    result = recommend([n], matrix(), current=current)
    assert result.images == ()
    first = result.node_upgrades[0]
    assert first.image == current.reference and len(first.differences) == 1
    assert first.differences[0].startswith("load nvidia-peermem (modprobe nvidia-peermem")
    loaded = replace_in(replace_in(n, "gpu.peermem.loaded", True), "gpu.peermem.version", n.gpu.driver_version)
    assert _clean(current, loaded)
