"""Engine-side wrong answers of issue 18, each on the committed Debian facts and node fixtures:
providers decided by the device's driver (not "hca_type starts with MT"), /sys/kernel/mm/memory_peers
inferred from the stack and release when the probe did not see it, and no "None" in any message."""

from __future__ import annotations

import dataclasses
import itertools

import pytest
from engine_facts import by_id, committed_facts, ids, node, replace_in, run, unknown_rules, with_nccl


def without_mlx5(facts):
    return replace_in(facts, "rdma.providers", tuple(p for p in facts.rdma.providers if p.name != "mlx5"))


def test_connectx3_mlx4_node_is_not_taken_for_mlx5():
    cx3 = node("inbox-5.15-connectx3-mlx4")
    result = run(without_mlx5(committed_facts("bookworm")), cx3)
    assert "RDMA-NO-MLX5-PROVIDER" not in ids(result) + unknown_rules(result)
    assert "UVERBS-ABI-RANGE" not in ids(result)  # mlx4's device ABI 4 is not compared with mlx5's 1
    # the same image on a ConnectX-6 (mlx5) node does get the error
    assert (
        by_id(
            run(without_mlx5(committed_facts("bookworm")), node("inbox-5.15-proprietary-535")), "RDMA-NO-MLX5-PROVIDER"
        ).severity
        == "error"
    )


@dataclasses.dataclass(frozen=True)
class DeviceWithDriver:  # RdmaDevice plus the `driver` field the node-facts work adds (sysfs device/driver)
    name: str
    hca_type: str
    driver: str | None
    uverbs_abi: int | None = None
    ports: tuple = ()
    fw_ver: str | None = None
    board_id: str | None = None
    link_layer: str | None = None


def test_a_renamed_device_is_mapped_by_its_driver():
    base = node("inbox-5.15-proprietary-535")
    renamed = replace_in(base, "rdma.devices", (DeviceWithDriver("ibp24s0", "MT4123", "mlx5_core"),))
    assert by_id(run(without_mlx5(committed_facts("bookworm")), renamed), "RDMA-NO-MLX5-PROVIDER")
    unknown_driver = replace_in(base, "rdma.devices", (DeviceWithDriver("ibp24s0", "MT4123", None),))
    result = run(without_mlx5(committed_facts("bookworm")), unknown_driver)
    assert "RDMA-NO-MLX5-PROVIDER" in unknown_rules(result) and "RDMA-NO-MLX5-PROVIDER" not in ids(result)


def test_memory_peers_inferred_for_old_nccl_on_doca():
    doca = replace_in(node("doca-24.10-proprietary-570-peermem"), "rdma.peer_memory_api", None)
    result = run(with_nccl(committed_facts("bookworm"), "2.18.3"), doca)
    f = by_id(result, "GDR-NCCL-LEGACY-MEMORY-PEERS")
    peers = [e for e in f.evidence if e.fact == "node.rdma.peer_memory_api"]
    assert peers and "inferred" in str(peers[0].value)


def test_memory_peers_inferred_present_on_mlnx_ofed_23_10():
    mofed = replace_in(
        replace_in(node("mofed-23.10-open-550-peermem"), "rdma.peer_memory_api", None),
        "gpu.kernel_module",
        "proprietary",
    )
    result = run(with_nccl(committed_facts("bookworm"), "2.18.3"), mofed)
    assert "GDR-NCCL-LEGACY-MEMORY-PEERS" not in ids(result) + unknown_rules(result)


NODE_GAPS = (
    "kernel.release",
    "rdma.stack",
    "rdma.ofed_version",
    "rdma.peer_memory_api",
    "gpu.driver_version",
    "gpu.kernel_module",
    "gpu.peermem.version",
    "limits.memlock_kib",
)
IMAGE_GAPS = ("rdma.libibverbs.version", "rdma.libibverbs.rdma_core", "cuda.compat_path", "cuda.compat_driver")


@pytest.mark.parametrize(
    "node_name",
    [
        "inbox-5.15-proprietary-535",
        "mofed-5.8-470-peermem",
        "doca-24.10-proprietary-570-peermem",
        "inbox-5.15-connectx3-mlx4",
    ],
)
def test_no_message_prints_none_or_a_placeholder_with_facts_missing(node_name):
    """Every rule and variant that fires on these mixes, with facts nulled one and two at a time."""
    seen_rules = set()
    images = [
        with_nccl(
            committed_facts("bullseye"),
            v,
            cuda="12.4.1",
            compat=c,
            env={"NCCL_IB_RETRY_CNT": "16", "NCCL_IB_TIMEOUT": "40", "NCCL_NET_GDR_LEVEL": "LOC"},
        )
        for v in ("2.13.4", "2.18.3", "2.23.4")
        for c in (None, "550.54.15")
    ]
    images.append(
        replace_in(
            committed_facts("bookworm"),
            "rdma.providers",
            tuple(
                dataclasses.replace(p, pabi=None, private_abi_needed=33)
                for p in committed_facts("bookworm").rdma.providers
            ),
        )
    )
    for image, gaps in itertools.product(images, itertools.combinations(("",) + NODE_GAPS + IMAGE_GAPS, 2)):
        n = node(node_name)
        for gap in filter(None, gaps):
            if gap in NODE_GAPS:
                n = replace_in(n, gap, None)
            elif gap.startswith("cuda.") and image.cuda is not None:
                image = replace_in(image, gap, None)
            elif gap.startswith("rdma.libibverbs."):
                image = replace_in(image, gap, None)
        result = run(image, n)
        for f in result.findings:
            seen_rules.add(f.id)
            for text in (f.title, f.mechanism, f.predicted_error or "", *f.fixes):
                assert "None" not in text and "?>" not in text, (f.id, gaps, text)
        for u in result.unknowns:
            assert "None" not in u.reason, (u.rule, gaps, u.reason)
    assert len(seen_rules) >= 5  # the mixes do exercise several rules
