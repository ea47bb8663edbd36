"""NODE-DRIVER-KNOWN-DEFECT: the node's driver release against catalogs/nvidia_driver_known_issues.json.

Releases compare as NVIDIA numbers them (BRANCH.MINOR.PATCH, numerically); each row's conditions are decided from
the node's and the job's facts, or asked. The cases are the rows' own sources: dmlc/xgboost#11242 (560 P2P hang,
fixed with 570, NCCL_P2P_DISABLE=1 avoids it), awslabs/amazon-eks-ami#1523 (GSP on A10G with 535.54.03; GSP off
with NVreg_EnableGpuFirmware=0), open-gpu-kernel-modules CHANGELOG (525.147.05: nvidia_p2p_get_pages double free).
"""

from __future__ import annotations

import dataclasses

import pytest
from engine_facts import committed_facts, node, replace_in, with_nccl
from engine_facts import matrix as load_matrix

from imgcheck.engine import evaluate
from imgcheck.engine.evaluate import evaluate_node
from imgcheck.engine.node_driver import affected
from imgcheck.engine.node_only import NODE_ONLY_IMAGE
from imgcheck.job.model import RUNTIME_HOST, EnvVar, JobFacts
from imgcheck.model.node import Gpu

RULE = "NODE-DRIVER-KNOWN-DEFECT"


@pytest.fixture(scope="module")
def matrix():
    return load_matrix()


def _row(matrix, issue):
    return matrix.need("nvidia_driver_known_issues", issue=issue)


def _gpus(name: str, count: int, firmware: str | None = None) -> tuple[Gpu, ...]:
    return tuple(Gpu(index=i, name=name, gsp_firmware=firmware) for i in range(count))


def _node(driver: str, gpus: tuple[Gpu, ...], module: str | None = "proprietary"):
    n = node("inbox-6.8-open-570")
    n = replace_in(n, "gpu.driver_version", driver)
    n = replace_in(n, "gpu.kernel_module", module)
    return replace_in(n, "gpu.gpus", gpus)


def _said(result) -> dict:
    return {**{u.rule: u for u in result.unknowns}, **{f.id: f for f in result.findings}}


def test_releases_compare_by_branch_and_number(matrix):
    double_free = _row(matrix, "r525_p2p_get_pages_double_free")
    assert affected("525.125.06", double_free) and affected("525.60.13", double_free)
    assert not affected("525.147.05", double_free) and not affected("525.147.10", double_free)
    assert not affected("535.54.03", double_free)  # another branch: not named
    hang = _row(matrix, "r560_p2p_collective_hang")
    assert affected("560.35.03", hang) and affected("560.28.03", hang)
    assert not affected("570.86.15", hang) and not affected("555.42.06", hang)
    gsp = _row(matrix, "gsp_unresponsive_t4_a10g")  # every release from the first report on
    assert not affected("525.147.05", gsp) and affected("535.54.03", gsp) and affected("580.95.05", gsp)


def test_p2p_hang_of_the_560_branch_is_decided_from_the_job(matrix):
    """xgboost#11242: two GPUs, NCCL, bare-metal python: P2P is used, the 560 driver hangs; 570 and
    NCCL_P2P_DISABLE=1 are the two ways out the maintainer names."""
    image = with_nccl(committed_facts("bookworm"), "2.21.5")
    job = JobFacts(path="run.sh", kind="python", runtime=RUNTIME_HOST)
    gpus = _gpus("NVIDIA RTX A6000", 2)
    found = _said(evaluate(image, _node("560.35.03", gpus), matrix, job=job))[RULE]
    assert found.severity == "warning" and "560.35.03" in found.title and "p2p" in found.title
    assert "NCCL_P2P_DISABLE=1" in " ".join(found.fixes) and "570" in " ".join(found.fixes)
    later = _said(evaluate(image, _node("570.86.15", gpus), matrix, job=job))[RULE]
    assert not hasattr(later, "fixes") and "branch 570" in later.reason  # asked: its notes are not encoded
    off = dataclasses.replace(job, env=(EnvVar("NCCL_P2P_DISABLE", "1"),))
    # P2P off or one GPU: the row does not apply; 560's own notes are not encoded, so the rule asks, never passes
    assert RULE not in _findings(evaluate(image, _node("560.35.03", gpus), matrix, job=off))
    one = _said(evaluate(image, _node("560.35.03", gpus[:1]), matrix, job=job))
    assert "branch 560" in one[RULE].reason


def test_gsp_defect_needs_gsp_on_and_an_affected_gpu(matrix):
    """amazon-eks-ami#1523: A10G on 535.54.03 with GSP (the 'GPU Firmware:' line prints the firmware version);
    the AMI's fix turns GSP off, and the line then prints N/A."""
    image = NODE_ONLY_IMAGE
    on = _node("535.54.03", _gpus("NVIDIA A10G", 1, "535.54.03"))
    found = _said(evaluate_node(image, on, matrix))[RULE]
    assert "gsp" in found.title and "NVreg_EnableGpuFirmware=0" in " ".join(found.fixes)
    off = _node("535.54.03", _gpus("NVIDIA A10G", 1, "N/A"))
    other = _node("535.54.03", _gpus("NVIDIA H100 80GB HBM3", 1, "535.54.03"))
    for n in (off, other):  # the GSP row does not apply (535.54.03's NVML ABI row is still asked: no image here)
        result = evaluate_node(image, n, matrix)
        assert RULE not in _findings(result) and "gsp_unresponsive_t4_a10g" not in _said(result)[RULE].reason
    # the proprietary module without the firmware line: whether GSP runs is asked, never passed
    unread = _node("535.54.03", _gpus("NVIDIA A10G", 1, None))
    u = _said(evaluate_node(image, unread, matrix))[RULE]
    assert "gsp_unresponsive_t4_a10g" in u.reason and "GSP" in u.reason
    # the open module runs only with GSP: decided without the line
    assert RULE in {
        f.id for f in evaluate_node(image, replace_in(unread, "gpu.kernel_module", "open"), matrix).findings
    }


def test_an_error_path_defect_is_asked_not_reported(matrix):
    """525.147.05's fix is for the error path of nvidia_p2p_get_pages (a failed free-callback registration): a node
    with a peer-memory client on an older 525 release may reach it, which no fact shows, so it is asked."""
    n = _node("525.125.06", _gpus("NVIDIA A100-SXM4-80GB", 2))
    loaded = replace_in(n, "gpu.peermem.loaded", True)
    said = _said(evaluate_node(NODE_ONLY_IMAGE, loaded, matrix))
    assert RULE not in {f.id for f in evaluate_node(NODE_ONLY_IMAGE, loaded, matrix).findings}
    assert "r525_p2p_get_pages_double_free" in said[RULE].reason and "error path" in said[RULE].reason
    none = replace_in(replace_in(n, "gpu.peermem.loaded", False), "gpu.peermem.legacy_nv_peer_mem", False)
    assert RULE not in _said(evaluate_node(NODE_ONLY_IMAGE, none, matrix))
    fixed = replace_in(loaded, "gpu.driver_version", "525.147.05")
    # the double free is fixed there; nvidia-peermem's unchecked free-callback context (fixed in 535.129.03, read
    # from the code) is still asked on that release
    still = _said(evaluate_node(NODE_ONLY_IMAGE, fixed, matrix))[RULE].reason
    assert "r525_p2p_get_pages_double_free" not in still and "peermem_free_callback_unchecked_context" in still
    later = replace_in(loaded, "gpu.driver_version", "535.129.03")  # its notes are not encoded: that is all it asks
    assert (
        "peermem_free_callback_unchecked_context"
        not in _said(evaluate_node(NODE_ONLY_IMAGE, later, matrix))[RULE].reason
    )


def _findings(result) -> set[str]:
    return {f.id for f in result.findings}


def test_a_branch_whose_notes_are_not_encoded_is_asked_never_passed(matrix):
    """nccl#133: a 384-era driver whose GPUDirect RDMA bug made allreduce return NaN, fixed by a newer driver. No
    notes of that branch are encoded, so 'no row matches' is no evidence: the rule asks, naming the branch."""
    n = replace_in(_node("384.81", _gpus("Tesla P100-SXM2-16GB", 8)), "gpu.peermem.legacy_nv_peer_mem", True)
    result = evaluate_node(NODE_ONLY_IMAGE, n, matrix)
    assert RULE not in _findings(result)
    reason = _said(result)[RULE].reason
    assert "branch 384" in reason and "not encoded" in reason and "GPUDirect RDMA" in reason


@pytest.mark.parametrize("where", ["first_read", "last_read", "after"])
def test_notes_read_ranges_decide_only_inside(matrix, where):
    """Every branch range of nvidia_driver_notes_read (generated from the open-gpu-kernel-modules CHANGELOG): its
    first and last read releases are decided when no row applies; a release after the last is asked."""
    for row in matrix.rows("nvidia_driver_notes_read"):
        release = row["last_read"] if where == "after" else row[where]
        if where == "after":
            release = ".".join(release.split(".")[:2]) + ".999"
        n = replace_in(
            replace_in(_node(release, _gpus("NVIDIA H100 80GB HBM3", 1)), "gpu.peermem.loaded", False),
            "gpu.peermem.legacy_nv_peer_mem",
            False,
        )
        said = _said(evaluate_node(NODE_ONLY_IMAGE, n, matrix)).get(RULE)
        if where == "after":
            assert said is not None and f"read from {row['first_read']} to {row['last_read']}" in said.reason
        else:
            assert said is None or "not encoded" not in getattr(said, "reason", ""), (release, said)


# ---------- which image or job component reaches each row's defect (catalog column `components`) ----------


def _ctx(matrix, image, n, job=None):
    from imgcheck.engine.context import Ctx

    return Ctx(image, n, matrix, job)


def _cuda_only(image):
    """A CUDA program without NCCL: what a host tool such as gdrcopy_sanity or a single-GPU CUDA sample is."""
    from imgcheck.model.image import Cuda

    return dataclasses.replace(image, cuda=Cuda(version="12.5.1"), nccl=())


def _absent_node(matrix):
    n = _node("560.35.03", _gpus("NVIDIA A100-SXM4-80GB", 8))
    n = replace_in(n, "mig.gpu_instances", {})
    n = replace_in(n, "state.imex_channels", ())
    return replace_in(n, "fabric.nvswitch_pci", ())


def test_every_row_names_components_the_rule_decides(matrix):
    from imgcheck.engine.node_driver import COMPONENTS

    for row in matrix.rows("nvidia_driver_known_issues"):
        assert row["components"], row["issue"]
        assert set(row["components"]) <= set(COMPONENTS), row["issue"]


def test_components_absent_decide_the_row_away(matrix):
    """Data-driven over the catalog: an image shown without any component a row names (a CUDA program with no NCCL
    and no GPU-memory registrar, its packages read, on a node without MIG, IMEX channels or NVSwitches) is decided not affected;
    rows reached by any CUDA program or by the node's own services stay."""
    from imgcheck.engine.node_driver import component

    image = _cuda_only(committed_facts("bookworm"))
    ctx = _ctx(matrix, image, _absent_node(matrix))
    assert ctx.nccl_present is False and not ctx.image.unknown_reason("packages")
    for row in matrix.rows("nvidia_driver_known_issues"):
        present, why = component(ctx, row)
        if {"cuda", "node"} & set(row["components"]):
            assert present is True, row["issue"]
        else:
            assert present is False and not why, row["issue"]


def test_components_unread_are_asked_and_present_are_shown(matrix):
    from imgcheck.engine.node_driver import component

    unread = dataclasses.replace(
        _cuda_only(committed_facts("bookworm")), unknown={"nccl": "not given", "packages": "not given"}
    )
    n = _node("560.35.03", _gpus("NVIDIA A100-SXM4-80GB", 8))
    nccl_row = _row(matrix, "r560_p2p_collective_hang")
    present, why = component(_ctx(matrix, unread, n), nccl_row)
    assert present is None and "NCCL" in why
    rdma_row = _row(matrix, "r525_p2p_get_pages_double_free")
    present, why = component(_ctx(matrix, unread, n), rdma_row)
    assert present is None and "registers GPU memory with a NIC" in why
    shipped = with_nccl(committed_facts("bookworm"), "2.21.5")
    assert component(_ctx(matrix, shipped, n), nccl_row) == (True, "")
    # a node check stands for every job the node runs
    assert component(_ctx(matrix, NODE_ONLY_IMAGE, n), rdma_row) == (True, "")


def test_a_host_tool_without_nccl_is_not_blamed_for_the_560_p2p_hang(matrix):
    """evaluation/sealed-2026-12-07g gdrcopy-305: gdrcopy_sanity (CUDA, no NCCL) on 8 A100s with driver 560.35.03.
    The 560 P2P hang is reached through NCCL's P2P transport: with NCCL shown absent the row is decided away, and
    only the branch's unencoded notes are asked."""
    image = _cuda_only(committed_facts("bookworm"))
    job = JobFacts(path="run.sh", kind="gdrcopy_sanity", runtime=RUNTIME_HOST)
    result = evaluate(image, _node("560.35.03", _gpus("NVIDIA A100-SXM4-80GB", 8)), matrix, job=job)
    assert RULE not in _findings(result)
    reason = _said(result)[RULE].reason
    assert "branch 560" in reason and "r560_p2p_collective_hang" not in reason


def test_relaxed_ordering_known_issue_is_asked_on_ampere_p2p_and_not_on_hopper(matrix):
    """R570 known issue 'Disable GPU initiated RO traffic on Ada Lovelace and older GPUs': only a VM guest whose PCIe
    topology hides the host bridges misses the mitigation, which no fact shows, so a P2P job on Ampere is asked; a
    Hopper node is outside the architectures NVIDIA names."""
    image = with_nccl(committed_facts("bookworm"), "2.21.5")
    job = JobFacts(path="run.sh", kind="python", runtime=RUNTIME_HOST)
    ampere = _said(evaluate(image, _node("570.133.20", _gpus("NVIDIA A100-SXM4-80GB", 2)), matrix, job=job))
    assert "pcie_p2p_relaxed_ordering_ada_and_older" in ampere[RULE].reason and "VM guest" in ampere[RULE].reason
    hopper = _said(evaluate(image, _node("570.133.20", _gpus("NVIDIA H100 80GB HBM3", 2)), matrix, job=job))
    assert "pcie_p2p_relaxed_ordering_ada_and_older" not in getattr(hopper.get(RULE), "reason", "")


def test_rows_citing_a_code_marker_take_their_releases_from_it(matrix):
    """A row read from the open modules' code (`marker`) names, as its fixed or first affected release, the first
    release of a range where nvidia_p2p_code_markers (generated from every release tag) has the change present, and
    the releases just before it do not have it."""
    cited = [r for r in matrix.rows("nvidia_driver_known_issues") if r.get("marker")]
    assert len(cited) >= 3
    for row in cited:
        ranges = [m for m in matrix.rows("nvidia_p2p_code_markers") if m["marker"] == row["marker"]]
        assert ranges, row["issue"]
        present_from = {m["first_release"] for m in ranges if m["state"] == "present"}
        named = (row.get("fixed_in") or []) + ([row["affected_min"]] if row.get("affected_min") else [])
        assert named and set(named) <= present_from, row["issue"]
        for release in named:
            assert affected(release, row) is bool(row.get("affected_min") == release), (row["issue"], release)


def test_mig_mixed_node_row_needs_mig_split_and_whole_gpus_under_kubernetes(matrix):
    """GPU Operator 25.3.x known issue (gpu-operator#1361): 570.124.06 to 570.158.01 on a node with MIG-split and
    whole GPUs leave GPU pods Pending; fixed in 570.172.08 and 580.65.06. Decided from node.mig and the launch."""
    from imgcheck.engine.node_driver import component

    row = _row(matrix, "r570_mig_mixed_node_pods_pending")
    assert affected("570.148.08", row) and affected("575.57.08", row)
    assert not affected("570.86.15", row) and not affected("570.172.08", row) and not affected("580.65.06", row)
    image = with_nccl(committed_facts("bookworm"), "2.21.5")
    pod = JobFacts(path="pod.yaml", kind="pod", runtime="kubernetes")
    n = _node("570.148.08", _gpus("NVIDIA A100-SXM4-80GB", 8))
    mixed = replace_in(n, "mig.gpu_instances", {"gpu0": 7, "gpu1": 3})
    whole = replace_in(n, "mig.gpu_instances", {})
    assert component(_ctx(matrix, image, whole, pod), row) == (False, "")  # no MIG: decided away
    found = _said(evaluate(image, mixed, matrix, job=pod))[RULE]
    assert "mig" in found.title and "570.172.08" in " ".join(found.fixes)
    bare = JobFacts(path="run.sh", kind="python", runtime=RUNTIME_HOST)
    assert "r570_mig_mixed_node_pods_pending" not in getattr(
        _said(evaluate(image, mixed, matrix, job=bare)).get(RULE), "reason", ""
    )
    assert RULE not in _findings(evaluate(image, mixed, matrix, job=bare))


def test_nvml_abi_row_needs_an_nvml_binding_in_the_image(matrix):
    """nvitop#89/#94 and pynvml#48: 535.43.02-535.98 changed NVML's process-information ABI, 535.104.05 restored
    it. Reached only through an NVML binding in the image: decided away when the packages are read without one."""
    from imgcheck.engine.node_driver import component
    from imgcheck.model.image import Package

    row = _row(matrix, "r535_nvml_process_info_abi")
    assert affected("535.98", row) and affected("535.43.02", row) and not affected("535.104.05", row)
    n = _node("535.98", _gpus("NVIDIA A100-SXM4-80GB", 1))
    plain = _cuda_only(committed_facts("bookworm"))
    assert component(_ctx(matrix, plain, n), row) == (False, "")
    with_binding = dataclasses.replace(
        plain, packages=(*plain.packages, Package("nvidia-ml-py", "12.535.77", "python"))
    )
    assert component(_ctx(matrix, with_binding, n), row) == (True, "")
    unread = dataclasses.replace(plain, unknown={"packages": "not given"})
    present, why = component(_ctx(matrix, unread, n), row)
    assert present is None and "NVML binding" in why


def test_unaligned_pin_row_is_reached_through_gdrcopy(matrix):
    """From 555.42.02 nv_p2p_get_pages rejects ranges not aligned to 64 KiB (code marker); gdrdrv before 2.4.2 passes
    them unrounded (NVIDIA/gdrcopy 7a03445), the gdrcopy-305 mechanism (gdrdrv 2.4.1 on 560.35.03). An image with
    GDRCopy is asked the gdrdrv question; one shown without it is not."""
    from imgcheck.engine.node_driver import component
    from imgcheck.model.image import Package

    row = _row(matrix, "p2p_get_pages_rejects_unaligned_ranges")
    assert affected("560.35.03", row) and not affected("550.163.01", row)
    plain = _cuda_only(committed_facts("bookworm"))
    tools = dataclasses.replace(plain, packages=(*plain.packages, Package("gdrcopy-tests", "2.4.1-1", "dpkg")))
    n = _node("560.35.03", _gpus("NVIDIA A100-SXM4-80GB", 8))
    assert component(_ctx(matrix, plain, n), row) == (False, "")
    assert component(_ctx(matrix, tools, n), row) == (True, "")
    job = JobFacts(path="run.sh", kind="gdrcopy_sanity", runtime=RUNTIME_HOST)
    reason = _said(evaluate(tools, n, matrix, job=job))[RULE].reason
    assert "p2p_get_pages_rejects_unaligned_ranges" in reason and "gdrdrv" in reason
