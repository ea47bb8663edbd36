"""NCCL known issues traced from NCCL's own source (catalogs/nccl_known_issues.json): the CUDA_LAUNCH_BLOCKING proxy
deadlock (2.4.2..2.17.1), NVLS with several NIC ports per GPU (2.18.1..2.22.3) and cuMem host buffers over the SHM
transport on GPUs without peer access (2.24.3 on, no fixed release). Each fires only on the facts that trigger it,
and its bounds are checked against the tags of a fetched NVIDIA/nccl mirror when one is present."""

from __future__ import annotations

import dataclasses
import importlib.util
import os
import re
import subprocess
import sys

import pytest
from engine_facts import committed_facts, matrix, node, run, with_nccl

from imgcheck.model.node import Gpu, RdmaPort

RULE = "NCCL-RELEASE-KNOWN-ISSUE"
NODE = "doca-24.10-open-580-peermem"  # two single-port ConnectX-7, eight H200, driver 580
MIRROR = os.environ.get("NCCL_MIRROR", "/work/.mirror/NVIDIA+nccl/repo")
TOOLS = os.path.join(os.path.dirname(__file__), "..", "tools", "nccl")


def _row(issue: str) -> dict:
    return matrix().need("nccl_known_issues", issue=issue)


def _hits(result, words: str) -> list:
    return [f for f in result.findings if f.id == RULE and words in f.title]


def _node(gpu_names: list[str], *, ports: int = 1, driver: str | None = None, pci: str | None = "cards"):
    """The fixture node with these GPUs; its two ConnectX devices get `ports` ports each and PCI addresses on two
    cards ("cards"), on one dual-port card (functions .0 and .1: "one-card") or none (None)."""
    n = node(NODE)
    gpus = tuple(Gpu(index=i, name=name) for i, name in enumerate(gpu_names))
    address = {"cards": "0000:{i}a:00.0", "one-card": "0000:1a:00.{i}"}
    devices = tuple(
        dataclasses.replace(
            d,
            ports=tuple(dataclasses.replace(d.ports[0], port=p + 1) for p in range(ports)),
            pci_address=address[pci].format(i=i + 1) if pci else None,
        )
        for i, d in enumerate(n.rdma.devices)
    )
    gpu = dataclasses.replace(n.gpu, gpus=gpus)
    if driver:
        gpu = dataclasses.replace(gpu, driver_version=driver, cuda_driver_version=None)
    return dataclasses.replace(n, gpu=gpu, rdma=dataclasses.replace(n.rdma, devices=devices))


# ---------- CUDA_LAUNCH_BLOCKING=1 with the kernel launched before the proxy work (NVIDIA/nccl@296c18629d2c) ----------


def test_launch_blocking_deadlock_fires_for_nccl_before_2_17_with_the_variable_set():
    # NCCL 2.14.3 is what torch 1.13 bundles (NVIDIA/nccl#750, pytorch/pytorch#97843)
    a100 = _node(["NVIDIA A100-SXM4-80GB"] * 8)
    result = run(with_nccl(committed_facts("bookworm"), "2.14.3", env={"CUDA_LAUNCH_BLOCKING": "1"}), a100)
    (hit,) = _hits(result, "CUDA_LAUNCH_BLOCKING")
    fixes = " ".join(hit.fixes)
    assert "CUDA_LAUNCH_BLOCKING=0" in fixes and "2.17.1" in fixes
    assert any("CUDA_LAUNCH_BLOCKING" in str(e.value) for e in hit.evidence) or "CUDA_LAUNCH_BLOCKING" in hit.mechanism
    assert hit.unshown and "multi-node" in hit.unshown[0]


def test_launch_blocking_deadlock_is_found_in_the_nccl_a_torch_wheel_pins():
    # torch 2.0.1's PyPI wheel requires nvidia-nccl-cu11==2.14.3 (catalogs/torch_wheels.json): the image carries only
    # torch's requirement, and the job sets CUDA_LAUNCH_BLOCKING=1 to debug
    pin = matrix().need("torch_wheels", torch="2.0.1")["nccl"]
    image = with_nccl(committed_facts("bookworm"), pin, origin="torch-requirement", env={"CUDA_LAUNCH_BLOCKING": "1"})
    assert _hits(run(image, _node(["NVIDIA A100-SXM4-80GB"] * 8)), "CUDA_LAUNCH_BLOCKING")
    # torch 2.1.0 pins 2.18.1, which enqueues the proxy work first
    newer = matrix().need("torch_wheels", torch="2.1.0")["nccl"]
    image = with_nccl(committed_facts("bookworm"), newer, origin="torch-requirement", env={"CUDA_LAUNCH_BLOCKING": "1"})
    assert not _hits(run(image, _node(["NVIDIA A100-SXM4-80GB"] * 8)), "CUDA_LAUNCH_BLOCKING")


@pytest.mark.parametrize(
    ("version", "env"),
    [("2.17.1", {"CUDA_LAUNCH_BLOCKING": "1"}), ("2.14.3", {"CUDA_LAUNCH_BLOCKING": "0"}), ("2.14.3", {})],
)
def test_launch_blocking_row_is_silent_when_fixed_off_or_unset(version, env):
    a100 = _node(["NVIDIA A100-SXM4-80GB"] * 8)
    result = run(with_nccl(committed_facts("bookworm"), version, env=env), a100)
    assert not _hits(result, "CUDA_LAUNCH_BLOCKING")
    assert not any("cuda_launch_blocking" in u.reason for u in result.unknowns)


# ---------- NVLS with several NIC ports per GPU (2.22.3: "Fix NVLS graphs search for dual NICs") ----------


def test_nvls_dual_port_fires_when_two_verbs_devices_are_the_ports_of_one_card():
    # ConnectX-4 on: each port is its own PCI function and verbs device (mlx5_2, mlx5_3 on 0000:1a:00.0/.1)
    result = run(with_nccl(committed_facts("bookworm"), "2.18.5"), _node(["NVIDIA H100 80GB HBM3"] * 8, pci="one-card"))
    assert _hits(result, "NVLS")


def test_nvls_dual_port_is_unknown_without_the_nics_pci_addresses():
    # 2.21.5: no other known issue of the release is shown (one outcome kind per rule keeps a finding over an unknown)
    result = run(with_nccl(committed_facts("bookworm"), "2.21.5"), _node(["NVIDIA H100 80GB HBM3"] * 8, pci=None))
    assert not _hits(result, "NVLS")
    assert any("nvls_multi_nic_per_gpu" in u.reason and "topology:multi-port-nic" in u.reason for u in result.unknowns)


def test_nvls_dual_port_fires_on_hopper_with_multi_port_nics():
    # NVIDIA/nccl#1043: HGX H100 with dual-port ConnectX, 2.18.5 and 2.19.3 fail
    dual = _node(["NVIDIA H100 80GB HBM3"] * 8, ports=2)
    result = run(with_nccl(committed_facts("bookworm"), "2.19.3"), dual)
    (hit,) = _hits(result, "NVLS")
    assert "NCCL_NVLS_ENABLE=0" in " ".join(hit.fixes) and "2.22.3" in " ".join(hit.fixes)
    assert any("NVSwitch" in c for c in hit.unshown)  # named, never shown: no node fact reads NVSwitch
    off = run(with_nccl(committed_facts("bookworm"), "2.19.3", env={"NCCL_NVLS_ENABLE": "0"}), dual)
    assert not _hits(off, "NVLS")


@pytest.mark.parametrize(
    ("version", "gpu", "ports"),
    [
        ("2.19.3", "NVIDIA H100 80GB HBM3", 1),  # one port per NIC: no GPU has two local NICs
        ("2.22.3", "NVIDIA H100 80GB HBM3", 2),  # the fixed release
        ("2.17.1", "NVIDIA H100 80GB HBM3", 2),  # before inter-node NVLS (search.cc's NVLS pattern is 2.18.1 on)
        ("2.19.3", "NVIDIA A100-SXM4-80GB", 2),  # NVLS needs compute capability 9.0
    ],
)
def test_nvls_dual_port_row_drops_when_a_condition_is_shown_false(version, gpu, ports):
    result = run(with_nccl(committed_facts("bookworm"), version), _node([gpu] * 8, ports=ports))
    assert not _hits(result, "one GPU is local to several NIC ports")
    assert not any("nvls_multi_nic_per_gpu" in u.reason for u in result.unknowns)


# ---------- cuMem host buffers over SHM on GPUs without peer access (NVIDIA/nccl#1838) ----------


def test_cumem_host_without_p2p_fires_on_pcie_gpus_with_a_recent_driver():
    # ray-project/ray#64109 (T4) and NVIDIA/nccl#1838 (4x L4, NCCL 2.27.3): NCCL_CUMEM_HOST_ENABLE=0 fixed both
    # peer access is a node fact (node.gpu.p2p, `nvidia-smi topo -p2p r` in a facts file): shown, the issue is decided
    n = _node(["Tesla T4"] * 4, driver="570.133.20")
    t4 = dataclasses.replace(n, gpu=dataclasses.replace(n.gpu, p2p=False))
    result = run(with_nccl(committed_facts("bookworm"), "2.27.3"), t4)
    (hit,) = _hits(result, "peer access")
    assert list(hit.fixes) == [
        "set NCCL_CUMEM_HOST_ENABLE=0 in the image Env or the launch's env (no NCCL release avoids it)"
    ]
    assert hit.unshown == ()
    fixed = run(with_nccl(committed_facts("bookworm"), "2.27.3", env={"NCCL_CUMEM_HOST_ENABLE": "0"}), t4)
    assert not _hits(fixed, "peer access")
    # not read (the probe reads files only): asked by that fact, not a warning on every PCIe multi-GPU node
    unread = run(with_nccl(committed_facts("bookworm"), "2.27.3"), n)
    assert not _hits(unread, "peer access")
    assert any(
        "cumem_host_shm_without_p2p" in u.reason and "node.gpu.p2p" in u.facts
        for u in unread.unknowns
        if u.rule == RULE
    )


@pytest.mark.parametrize(
    ("version", "gpus", "driver"),
    [
        ("2.27.3", ["NVIDIA H200"] * 8, "580.65.06"),  # NVLink parts: NCCL uses P2P between them, not SHM
        ("2.27.3", ["Tesla T4"], "570.133.20"),  # one GPU: no intra-node transport at all
        ("2.23.4", ["Tesla T4"] * 4, "570.133.20"),  # off by default before 2.24.3
        ("2.27.3", ["Tesla T4"] * 4, "550.54.15"),  # a CUDA 12.4 driver: NCCL leaves cuMem host buffers off
    ],
)
def test_cumem_host_without_p2p_drops_when_a_condition_is_shown_false(version, gpus, driver):
    result = run(with_nccl(committed_facts("bookworm"), version), _node(gpus, driver=driver))
    assert not _hits(result, "peer access")
    assert not any("cumem_host_shm_without_p2p" in u.reason for u in result.unknowns)


def test_cumem_host_without_p2p_is_unknown_without_gpu_facts():
    n = _node([], driver="570.133.20")
    result = run(with_nccl(committed_facts("bookworm"), "2.27.3"), n)
    assert not _hits(result, "peer access")
    assert any("cumem_host_shm_without_p2p" in u.reason and "gpus:several" in u.reason for u in result.unknowns)


# ---------- the bounds against NCCL's source, by the kept tracer (tools/nccl/first_tag.py) ----------


def _first_tag():
    """tools/nccl/first_tag.py, loaded from its path (tools/ is not a package the tests install); it imports its
    sibling nccl_git, so the folder is on sys.path while it loads."""
    sys.path.insert(0, TOOLS)
    try:
        spec = importlib.util.spec_from_file_location("first_tag", os.path.join(TOOLS, "first_tag.py"))
        assert spec and spec.loader
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(TOOLS)
    return module


def _have_mirror() -> bool:
    try:
        subprocess.run(["git", "-C", MIRROR, "rev-parse", "v2.22.3-1"], check=True, capture_output=True)
    except (OSError, subprocess.CalledProcessError):
        return False
    return True


needs_mirror = pytest.mark.skipif(
    not _have_mirror(), reason=f"no NVIDIA/nccl mirror at {MIRROR} (fetch github:NVIDIA/nccl)"
)


@needs_mirror
@pytest.mark.parametrize(
    ("issue", "path", "line", "bound"),
    [
        # the inter-node NVLS search starts at nccl_min; the duplicate-head check of the fix starts at nccl_below
        ("nvls_multi_nic_per_gpu", "src/graph/search.cc", "NCCL_TOPO_PATTERN_NVLS", "nccl_min"),
        (
            "nvls_multi_nic_per_gpu",
            "src/graph/search.cc",
            "check whether there is duplicate head when one GPU connects with multiple NICs",
            "nccl_below",
        ),
        # the kernel-then-proxy order's comment is in every release from 2.4.6 (2.4.2 keeps it in enqueue.cu)
        (
            "cuda_launch_blocking_proxy_deadlock",
            "src/enqueue.cu",
            "Start the network proxies as soon as the kernel has been launched",
            "nccl_min",
        ),
    ],
)
def test_row_bounds_are_the_first_tags_holding_the_code(issue, path, line, bound, monkeypatch):
    monkeypatch.setenv("NCCL_MIRROR", MIRROR)
    tags = _first_tag().tags_holding(path, line)
    assert tags and tags[0] == f"v{_row(issue)[bound]}-1"


@needs_mirror
def test_launch_blocking_fix_is_in_the_fixed_release_and_not_before(monkeypatch):
    monkeypatch.setenv("NCCL_MIRROR", MIRROR)
    tags = _first_tag().tags_holding("src/misc/cudawrap.cc", 'getenv("CUDA_LAUNCH_BLOCKING")')
    assert tags and tags[0] == f"v{_row('cuda_launch_blocking_proxy_deadlock')['nccl_below']}-1"
    # and the proxy-after-launch order holds up to the release before it
    old = _first_tag().tags_holding("src/enqueue.cc", "if (comm->persistentRefs == 0) { // implies !plan->persistent")
    assert old[-1] == "v2.16.5-1"


@needs_mirror
def test_cumem_host_import_is_in_every_release_from_the_row_on(monkeypatch):
    monkeypatch.setenv("NCCL_MIRROR", MIRROR)
    tags = _first_tag().tags_holding("src/transport/shm.cc", "ncclCuMemHostEnable() && !desc->legacy")
    row = _row("cumem_host_shm_without_p2p")
    assert tags[0] == "v2.23.4-1" and row["nccl_min"] == "2.24.3"  # the path exists, off by default, in 2.23.4
    assert (
        row["nccl_below"] is None and tags[-1] == sorted(tags, key=lambda t: [int(x) for x in t[1:-2].split(".")])[-1]
    )


def test_gpu_nvlink_parts_name_only_nvlink_boards():
    rows = matrix().rows("gpu_nvlink_parts")

    def nvlink(name: str) -> bool:
        return any(re.search(r["pattern"], name) for r in rows)

    assert all(nvlink(n) for n in ("NVIDIA A100-SXM4-80GB", "NVIDIA H100 80GB HBM3", "NVIDIA H200", "NVIDIA GB200"))
    assert not any(nvlink(n) for n in ("Tesla T4", "NVIDIA L4", "NVIDIA H100 PCIe", "NVIDIA H200 NVL", "NVIDIA A10"))


def test_ports_helper_keeps_port_type():
    assert isinstance(_node(["x"], ports=2).rdma.devices[0].ports[1], RdmaPort)


# ---------- release-note fixes traced to the first release of the code they change (catalogs/nccl_fix_ranges.json) ----------


def _trace(entry: str) -> dict:
    return matrix().need("nccl_fix_ranges", entry=entry)


@needs_mirror
@pytest.mark.parametrize(
    ("entry", "path", "line"),
    [
        ("2.15.5#1", "src/include/devcomm.h", "NCCL_ALGO_COLLNET_CHAIN"),
        ("2.22.3#32", "src/include/devcomm.h", "NCCL_ALGO_COLLNET_DIRECT"),
        ("2.17.1#5", "src/init.cc", "collNetSupport"),
        ("2.27.3#47", "src/ras/ras.cc", "ncclRasCommInit"),
        ("2.27.3#48", "src/ras/ras.cc", "ncclRasCommInit"),
        ("2.28.7#28", "src/transport/nvls.cc", "ncclNvlsGraphRegisterBuffer"),
        ("2.24.3#23", "src/transport/nvls.cc", "ncclNvlsGraphRegisterBuffer"),
        # issue 32: 2.8.3's chunked send/recv schedule, the proxy op pool's freeOps hand-off, the async comm reclaim
        (
            "2.8.4#1",
            "src/group.cc",
            "if (sendbytes > sendChunkSize) { sendbytes = sendChunkSize; } else { sendRemaining = 0; }",
        ),
        ("2.28.9#1", "src/proxy.cc", "__sync_val_compare_and_swap(pool->freeOps+"),
        ("2.27.6#6", "src/init.cc", "commReclaim, NULL, free, comm)"),
        ("2.7.6#1", "src/graph/xml.cc", 'NCCLCHECK(ncclTopoSetAttrFromSys(sub, path, "class", "tclass"));'),
    ],
)
def test_traced_fix_starts_at_the_first_tag_holding_the_code_it_changes(entry, path, line, monkeypatch):
    monkeypatch.setenv("NCCL_MIRROR", MIRROR)
    tags = _first_tag().tags_holding(path, line)
    assert tags and tags[0] == f"v{_trace(entry)['first_affected']}-1"
    # and the fixing release is later than the first affected one
    fixed = matrix().need("nccl_release_notes", entry=entry)["release"]
    assert [int(x) for x in fixed.split(".")] > [int(x) for x in _trace(entry)["first_affected"].split(".")]


def _later_fix_texts(version: str, env: dict) -> str:
    result = run(with_nccl(committed_facts("bookworm"), version, env=env), _node(["NVIDIA H100 80GB HBM3"] * 8))
    return " ".join(
        [u.reason for u in result.unknowns if u.rule == "NCCL-RELEASE-LATER-FIX"]
        + [f.mechanism for f in result.findings if f.id == "NCCL-RELEASE-LATER-FIX"]
    )


def _undecided(text: str) -> int:
    found = re.search(r"(\d+) more fixes in later releases|predates (\d+) release-note fixes", text)
    assert found, text
    return int(found.group(1) or found.group(2))


def test_collnet_fixes_count_only_where_collnet_is_on_and_the_code_exists():
    # before 2.27.3 only NCCL_COLLNET_ENABLE=1 turns CollNet on: unset, the CollNet Chain crash (2.14.3..2.15.5) drops
    assert "some node topologies" not in _later_fix_texts("2.14.3", {})
    on = {"NCCL_COLLNET_ENABLE": "1"}
    # with CollNet on, 2.14.3 names the CollNet Chain and Direct crashes (code first in 2.14.3) as fixes this launch can
    # hit, asking for what the node topology decides; 2.13.4 predates that code and names neither
    newer, older = _later_fix_texts("2.14.3", on), _later_fix_texts("2.13.4", on)
    assert "some node topologies" in newer and "CollNet Direct chosen" in newer
    assert "some node topologies" not in older and "CollNet Direct chosen" not in older


def _gen_release_notes():
    sys.path.insert(0, TOOLS)
    try:
        spec = importlib.util.spec_from_file_location("gen_release_notes", os.path.join(TOOLS, "gen_release_notes.py"))
        assert spec and spec.loader
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(TOOLS)
    return module


@needs_mirror
@pytest.mark.parametrize(("tag", "version"), [("v2.26.5-1", "2.26.5"), ("v2.27.7-1", "2.27.7")])
def test_release_note_entries_read_again_from_the_tag_match_the_catalog(tag, version, monkeypatch):
    """The release commit's body at two tags, parsed again: every entry is a row of the catalog with the same text,
    and a sentence wrapped after a function word stays one entry ('... patterns on' / 'MNNVL systems ...')."""
    monkeypatch.setenv("NCCL_MIRROR", MIRROR)
    gen = _gen_release_notes()
    found = gen._release_commit(tag, version)
    assert found is not None
    parsed = gen.entries(found[1])
    rows = [
        r["text"]
        for r in matrix().rows("nccl_release_notes")
        if r["release"] == version and r["origin"] == "release note"
    ]
    assert parsed == rows
    assert not any(t.endswith((" on", " than", " of")) for t in parsed)


def test_mnnvl_fixes_drop_on_nodes_whose_nvlink_stays_inside_the_board():
    # 2.26.5's MNNVL alltoall hang (first possible in 2.20.3, MNNVL's first release): an HGX H100 node cannot be in a
    # multi-node NVLink domain, a GB200 node can (the rack decides: named, not shown)
    hgx = _later_fix_texts("2.24.3", {})
    assert "mnnvl:on" not in hgx and "more than 80 ranks" not in hgx
    result = run(with_nccl(committed_facts("bookworm"), "2.24.3"), _node(["NVIDIA GB200"] * 4))
    reasons = " ".join(
        [u.reason for u in result.unknowns if u.rule == "NCCL-RELEASE-LATER-FIX"]
        + [f.mechanism for f in result.findings if f.id == "NCCL-RELEASE-LATER-FIX"]
    )
    assert "mnnvl:on" in reasons and "more than 80 ranks" in reasons
    # before MNNVL existed the entry drops whatever the GPUs
    before = run(with_nccl(committed_facts("bookworm"), "2.19.3"), _node(["NVIDIA GB200"] * 4))
    assert not any("more than 80 ranks" in u.reason or "mnnvl:on" in u.reason for u in before.unknowns)


@needs_mirror
def test_mnnvl_first_release_is_the_first_tag_with_mnnvl_in_init(monkeypatch):
    monkeypatch.setenv("NCCL_MIRROR", MIRROR)
    tags = _first_tag().tags_holding("src/init.cc", "MNNVL")
    assert tags[0] == f"v{_trace('2.27.3#30')['first_affected']}-1" == f"v{_trace('2.26.5#1')['first_affected']}-1"
