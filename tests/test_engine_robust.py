"""Any mix of known and unknown facts: the engine never crashes, never leaves a {placeholder} unfilled,
and every finding carries sources and an allowed severity/confidence."""

from __future__ import annotations

import dataclasses

import pytest
from engine_facts import committed_facts, node, replace_in, run, with_nccl
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from imgcheck.engine import RULE_IDS

NODE_FIELDS = (
    "kernel.release",
    "rdma.stack",
    "rdma.ofed_version",
    "rdma.uverbs_abi",
    "rdma.peer_memory_api",
    "gpu.driver_version",
    "gpu.kernel_module",
    "gpu.peermem.loaded",
    "gpu.peermem.version",
    "gpu.peermem.legacy_nv_peer_mem",
    "limits.memlock_kib",
)
NODES = (
    "inbox-5.15-proprietary-535",
    "inbox-6.8-open-570",
    "mofed-5.8-470-peermem",
    "doca-24.10-proprietary-570-peermem",
    "mofed-23.10-open-550-peermem",
    "handwritten-minimal",
    "cpu-no-rdma",
)
IMAGES = st.fixed_dictionaries(
    {
        "nccl": st.sampled_from([None, "2.11.4", "2.13.4", "2.18.3", "2.21.5", "2.23.4", "2.27.3"]),
        "cuda": st.sampled_from([None, "11.8.0", "12.4.1", "12.8.1", "13.0.1"]),
        "compat": st.sampled_from([None, "550.54.15"]),
        "env": st.dictionaries(
            st.sampled_from(
                [
                    "NCCL_IB_RETRY_CNT",
                    "NCCL_IB_TIMEOUT",
                    "NCCL_DMABUF_ENABLE",
                    "NCCL_IB_DISABLE",
                    "NCCL_NET_GDR_LEVEL",
                    "NCCL_CUMEM_ENABLE",
                    "NCCL_IB_PCI_RELAXED_ORDERING",
                ]
            ),
            st.sampled_from(["0", "1", "7", "16", "-1", "LOC", "SYS", "x", ""]),
            max_size=3,
        ),
        "suite": st.sampled_from(["bullseye", "bookworm"]),
        "drop_lib": st.booleans(),
        # facts a hand-written file, catalog row or webhook input left out (unknown, not absent)
        "image_unknown": st.sets(
            st.sampled_from(
                [
                    "rdma.libibverbs",
                    "rdma.providers",
                    "rdma.flavor",
                    "cuda.compat_driver",
                    "rdma.libibverbs.has_reg_dmabuf_mr",
                    "rdma.libibverbs.has_reg_mr_iova2",
                    "rdma.libibverbs.symbol_versions",
                ]
            )
        ),
        "partial_nccl": st.booleans(),
    }
)


@pytest.fixture(scope="module")
def facts():
    return {s: committed_facts(s) for s in ("bullseye", "bookworm")}


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(image_spec=IMAGES, node_name=st.sampled_from(NODES), unknown=st.sets(st.sampled_from(NODE_FIELDS)))
def test_engine_is_total(facts, image_spec, node_name, unknown):
    image = facts[image_spec["suite"]]
    if image_spec["nccl"]:
        image = with_nccl(
            image, image_spec["nccl"], cuda=image_spec["cuda"], compat=image_spec["compat"], env=image_spec["env"]
        )
    else:
        image = dataclasses.replace(image, env=dict(image_spec["env"]))
    if image_spec["drop_lib"]:
        image = replace_in(replace_in(image, "rdma.libibverbs", None), "rdma.providers", ())
    if image_spec["partial_nccl"] and image.nccl:  # "2.18" as a person writes it: any 2.18.x
        image = dataclasses.replace(
            image, nccl=tuple(dataclasses.replace(x, version=x.version.rsplit(".", 1)[0]) for x in image.nccl)
        )
    if image_spec["image_unknown"]:
        image = dataclasses.replace(
            image, unknown={k: "not given in the facts file" for k in image_spec["image_unknown"]}
        )
        if "rdma.libibverbs" in image.unknown:
            image = replace_in(image, "rdma.libibverbs", None)
    n = node(node_name)
    for path in unknown:
        n = replace_in(n, path, None)
    result = run(image, n)
    for f in result.findings:
        assert f.id in RULE_IDS
        assert f.severity in ("error", "warning", "info")
        assert f.confidence in ("verified", "reported", "vendor-guidance", "hypothesis")
        assert f.sources
        for text in (f.title, f.mechanism, f.predicted_error or "", *f.fixes):
            assert "?>" not in text, (f.id, text)  # a template named a fact the rule did not pass
            assert "None" not in text, (f.id, text)  # a missing fact printed as Python's None
    for u in result.unknowns:
        assert u.rule in RULE_IDS and u.reason and "None" not in u.reason
    # a rule is never both decided and unknown for one node (a conditional finding is not a decision: its rule's
    # presence question stays asked)
    assert not {f.id for f in result.findings if not f.assumes} & {u.rule for u in result.unknowns} - {
        "UVERBS-ABI-RANGE"
    }  # global vs per-device ABI
