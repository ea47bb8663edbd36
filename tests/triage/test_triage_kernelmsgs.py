"""Kernel RDMA / GPU peer-memory dmesg lines (issue 32, kernelmsgs): the catalog generated from the drivers' source
(kernel_rdma_messages.json, tools/host/gen_kernel_rdma_messages.py) and its cause classes (kernel_rdma_classes.json).
Every mapped format, rendered, is matched by the class it names; real kernel lines from public threads get their class
and the cause the code shows; lines the source shows to be informational stay unmapped; hand-written signatures keep
the lines they already own."""

from __future__ import annotations

import json
import re
from importlib import resources
from pathlib import Path

import pytest

from imgcheck.triage import host_catalog, triage
from imgcheck.triage.signatures import load_signatures

SPEC = re.compile(r"%[-+ #0-9.*]*(?:hh|h|ll|l|L|z|j|t)?([diouxXcsp%])")
SITE = re.compile(r"^[\w.-]+/[\w.-]+@[\w./-]+:[\w./-]+\.c:\d+$")


def _data(name: str) -> dict:
    return json.loads(resources.files("imgcheck.data.triage").joinpath(name).read_text("utf-8"))


@pytest.fixture(scope="module")
def sigs():
    return host_catalog.extend(load_signatures()).by_id()


def _render(fmt: str) -> str:
    def one(m: re.Match[str]) -> str:
        return {"s": "mlx5_0", "c": "x", "p": "0x7f12", "%": "%"}.get(m.group(1), "7")

    return SPEC.sub(one, fmt)


def _owner(sigs, line: str) -> list[str]:
    return sorted(s.id for s in sigs.values() if any(p.search(line) for p in s.patterns))


def test_catalog_is_loaded_and_every_class_has_rows_and_causes(sigs):
    assert "kernel_rdma_messages.json" in host_catalog.GENERATED_MULTI
    assert "kernel_rdma_classes.json" in host_catalog.CLASS_FILES
    classes = {m["id"] for m in _data("kernel_rdma_classes.json")["messages"]}
    doc = _data("kernel_rdma_messages.json")
    named = {p["signature"] for r in doc["messages"] for p in r.get("signatures", ())}
    assert named == classes  # no class without formats, no row naming an unknown class
    for cls in classes:
        assert sigs[cls].causes and sigs[cls].patterns, cls
    # the family, not a sample: hundreds of formats over the releases, most recognised but unmapped
    assert doc["coverage"]["formats"] > 800 and 80 < doc["coverage"]["mapped"] < doc["coverage"]["formats"]


def test_every_row_cites_its_site_and_releases():
    for row in _data("kernel_rdma_messages.json")["messages"]:
        assert SITE.match(row["site"]), row["site"]
        assert row["first"] and row["last"] and row["tree"] in {"MLNX_OFED", "NVIDIA driver", "nv_peer_mem"}
        re.compile(row["regex"])


@pytest.mark.parametrize(
    "row",
    [r for r in _data("kernel_rdma_messages.json")["messages"] if r.get("signatures")],
    ids=lambda r: r["format"][:50],
)
def test_every_mapped_format_rendered_is_matched_by_its_class(sigs, row):
    line = "[ 12.345678] mlx5_core 0000:3b:00.0 ens1f0np0: " + _render(row["format"])
    for pick in row["signatures"]:
        assert re.search(pick["regex"], line), (pick["regex"], line)
        assert any(p.search(line) for p in sigs[pick["signature"]].patterns), pick["signature"]


# verbatim kernel lines from public threads -> the class the catalog gives them
REAL = [
    # https://github.com/openucx/ucx/issues/7738 (DCT creation failing while the firmware stopped answering)
    (
        "b1360: [14280.445226] mlx5_core 0000:61:00.0: wait_func:1132:(pid 141181): CREATE_DCT(0x710) timeout. Will"
        " cause a leak of a command resource",
        "KERNEL-MLX5-CMD-TIMEOUT",
    ),
    (
        "b1360: [14280.445220] mlx5_core 0000:61:00.0: wait_func_handle_exec_timeout:1104:(pid 141183): cmd[22]:"
        " CREATE_DCT(0x710) No done completion",
        "KERNEL-MLX5-CMD-TIMEOUT",
    ),
    # https://github.com/openucx/ucx/issues/6264 (ibv_reg_mr failed: Cannot allocate memory)
    (" infiniband mlx5_0: create_mkey_callback:131:(pid 0): async reg mr failed. status -12", "KERNEL-MLX5-MKEY"),
    # https://github.com/Mellanox/nv_peer_memory/issues/112
    (
        "nv_mem nv_get_p2p_free_callback:144 nv_get_p2p_free_callback -- invalid page_table ",
        "KERNEL-PEERMEM-INVALIDATED",
    ),
    # https://github.com/pmem/issues/issues/868 (registering memory: Unknown error -95)
    ("[82047.691004] ib_umem_get: failed to get user pages, nr_pages=512, flags=1", "KERNEL-UMEM-PIN-FAILED"),
    ("[82047.691057] mlx5_1:mr_umem_get:766:(pid 63518): umem get failed (-95)", "KERNEL-UMEM-PIN-FAILED"),
    # https://github.com/NVIDIA/gdrcopy/issues/1 (an older mlx5_ib printing it as a warning, EFAULT on GPU memory)
    (
        "[61024.799920] mlx5_warn:mlx5_0:mlx5_ib_reg_user_mr:1418:(pid 23265): umem get failed (-14)",
        "KERNEL-UMEM-PIN-FAILED",
    ),
    # https://github.com/pocopico/rp-ext/issues/129 (ConnectX-4 Lx not coming up)
    ("[    5.662202] mlx5_core 0000:01:00.0: mlx5_load_one failed with error code -22", "KERNEL-MLX5-INIT"),
    ("[    5.502207] mlx5_core 0000:01:00.0: handle_hca_cap failed", "KERNEL-MLX5-INIT"),
]


@pytest.mark.parametrize(("line", "cls"), REAL, ids=[c for _, c in REAL])
def test_real_kernel_lines_get_their_class(sigs, line, cls):
    assert cls in _owner(sigs, line)


def test_a_dmesg_paste_next_to_an_nccl_error_names_the_kernel_cause(tmp_path):
    # ucx#6264's kernel lines after its user-space error: the mkey class leads and reads the errno (-12 ENOMEM)
    log = tmp_path / "job.log"
    log.write_text(
        "[1651140000.1] [hcn3:1234:0] ib_md.c:349 UCX ERROR ibv_reg_mr(address=0x7f0000000000, length=1048576,"
        " access=0xf) failed: Cannot allocate memory\n" + REAL[2][0] + "\n"
    )
    report = triage([str(log)])
    kernel = [d for d in report.diagnoses if d.signature == "KERNEL-MLX5-MKEY"]
    assert kernel, [d.signature for d in report.diagnoses]
    assert kernel[0].causes[0].id == "mkey-resources"


def test_old_driver_page_table_line_promotes_the_driver_defect(tmp_path):
    log = tmp_path / "dmesg.log"
    log.write_text(REAL[3][0] + "\n")
    report = triage([str(log)])
    d = next(d for d in report.diagnoses if d.signature == "KERNEL-PEERMEM-INVALIDATED")
    assert d.causes[0].id == "old-gpu-driver-callback-bug"


@pytest.mark.parametrize(
    "line",
    [
        # https://github.com/geerlingguy/arm-nas/issues/16 (a healthy probe: informational lines)
        "[   11.097374] mlx5_core 0004:01:00.0: Port module event: module 0, Cable plugged",
        "[   11.097626] mlx5_core 0004:01:00.0: mlx5_pcie_event:294:(pid 542): PCIe slot advertised sufficient power"
        " (75W).",
        "[   10.643316] mlx5_core 0004:01:00.0: firmware version: 16.27.2048",
        "mlx5_core 0000:3b:00.0 ens1f0np0: Link up",
    ],
)
def test_informational_lines_stay_unmapped(sigs, line):
    assert not [s for s in _owner(sigs, line) if s.startswith("KERNEL-")]


def test_hand_written_peermem_signature_keeps_its_line(tmp_path):
    # https://github.com/NVIDIA/nccl/issues/1474: harmless per the maintainers (nv_peer_memory#120)
    log = tmp_path / "dmesg.log"
    log.write_text(
        "[25033.266922] nvidia-peermem nv_get_p2p_free_callback:127 ERROR detected invalid context, skipping"
        " further processing\n"
    )
    report = triage([str(log)])
    assert [d.signature for d in report.diagnoses] == ["PEERMEM-INVALID-CONTEXT"]


def test_generator_is_kept_and_says_how_to_rerun():
    text = (Path(__file__).resolve().parents[2] / "tools/host/gen_kernel_rdma_messages.py").read_text()
    assert "_MIRROR=/work/.mirror/" in text


# https://github.com/NVIDIA/nccl-tests/issues/206 (tests/triage/logs/nccl-tests-206-enomem.log)
NCCL_ENOMEM = "misc/ibvwrap.cc:278 NCCL WARN Call to ibv_reg_mr_iova2 failed with error Cannot allocate memory"


def test_a_kernel_line_in_the_input_decides_the_nccl_side_cause(tmp_path):
    """The NCCL registration failure's own causes read the kernel classes (sig:KERNEL-*.count): ucx#6264's mkey line
    makes HCA key resources the first cause of the ENOMEM; without a kernel line the memlock limit stays first."""
    alone = tmp_path / "alone.log"
    alone.write_text(NCCL_ENOMEM + "\n")
    with_kernel = tmp_path / "with-kernel.log"
    with_kernel.write_text(NCCL_ENOMEM + "\n" + REAL[2][0] + "\n")
    first = {}
    for log in (alone, with_kernel):
        report = triage([str(log)])
        d = next(d for d in report.diagnoses if d.signature == "IBV-REG-MR-ENOMEM")
        first[log.name] = d.causes[0].id
    assert first == {"alone.log": "memlock", "with-kernel.log": "kernel-mkey-resources"}


def test_every_kernel_condition_in_the_signatures_names_a_catalog_class():
    classes = {m["id"] for m in _data("kernel_rdma_classes.json")["messages"]}
    named = set()
    for sig in _data("signatures.json")["signatures"]:
        for cause in sig["causes"]:
            named.update(re.findall(r"sig:(KERNEL-[A-Z0-9-]+)\.", " ".join(cause.get("when", ()))))
    assert named and named <= classes
