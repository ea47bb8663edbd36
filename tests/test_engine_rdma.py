"""RDMA userspace rules on the real Debian images (rdma-core 33.2 / 44.0 / 56.1) against node fixtures."""

from __future__ import annotations

import dataclasses

import pytest
from engine_facts import by_id, committed_facts, ids, node, replace_in, run, unknown_rules, with_nccl

from imgcheck.model.image import Provider

EXPECTED = {  # what the real images carry (DESIGN.md / the research catalog)
    "bullseye": dict(rdma_core="33.2", pabi=33, iova2=True, dmabuf=False),
    "bookworm": dict(rdma_core="44.0", pabi=34, iova2=True, dmabuf=True),
    "trixie": dict(rdma_core="56.1", pabi=34, iova2=True, dmabuf=True),
}
ALL_NODES = (
    "inbox-5.15-proprietary-535",
    "inbox-6.8-open-570",
    "mofed-5.8-proprietary-535-peermem",
    "mofed-23.10-open-550-peermem",
    "doca-24.10-open-580-peermem",
    "doca-24.10-proprietary-570-peermem",
)


@pytest.fixture(scope="module")
def facts():
    return lambda suite: committed_facts(suite)


@pytest.mark.parametrize("suite", sorted(EXPECTED))
def test_real_images_are_consistent_on_every_node(facts, suite):
    image = facts(suite)
    want = EXPECTED[suite]
    lib = image.rdma.libibverbs
    assert (lib.rdma_core, lib.private_abi, lib.has_reg_mr_iova2, lib.has_reg_dmabuf_mr) == (
        want["rdma_core"],
        want["pabi"],
        want["iova2"],
        want["dmabuf"],
    )
    assert {p.pabi for p in image.rdma.providers} == {want["pabi"]}
    for name in ALL_NODES:
        result = run(image, node(name))
        # a consistent distro rdma-core with an mlx5 provider: no RDMA userspace problem on any node
        assert not {"RDMA-PABI-MISMATCH", "RDMA-NO-MLX5-PROVIDER", "RDMA-NO-LIBIBVERBS", "UVERBS-ABI-RANGE"} & set(
            ids(result)
        )
        # a plain rdma image has no NCCL and no CUDA: NCCL rules are not applicable, not unknown
        assert not [r for r in unknown_rules(result) if r.startswith(("GDR", "DMABUF", "CUMEM", "CUDA"))]
        assert "DMABUF-UNSUPPORTED" not in ids(result)


def test_host_mounted_provider_from_another_pabi(facts):
    """bookworm's libibverbs (PABI 34) with bullseye's libmlx5-rdmav33.so mounted in: mlx5 cannot load."""
    image = facts("bookworm")
    old = next(p for p in facts("bullseye").rdma.providers if p.name == "mlx5")
    providers = tuple(p for p in image.rdma.providers if p.name != "mlx5") + (old,)
    mixed = replace_in(image, "rdma.providers", providers)
    result = run(mixed, node("inbox-6.8-open-570"))
    f = by_id(result, "RDMA-PABI-MISMATCH")
    assert f.severity == "error" and f.confidence == "verified"
    assert f.predicted_error == (
        "libibverbs: Warning: couldn't load driver 'libmlx5-rdmav34.so': "
        "libmlx5-rdmav34.so: cannot open shared object file: No such file or directory"
    )
    facts_by_name = {e.fact: e for e in f.evidence}
    assert facts_by_name["image.rdma.libibverbs.private_abi"].value == 34
    assert facts_by_name["image.rdma.libibverbs.private_abi"].path == image.rdma.libibverbs.path
    assert facts_by_name["image.rdma.providers.mlx5.pabi"].value == 33
    assert facts_by_name["image.rdma.providers.mlx5.pabi"].path == old.path
    assert facts_by_name["image.rdma.providers.mlx5.pabi"].layer == old.layer
    assert f.sources and all(s.startswith("https://") for s in f.sources)


def test_provider_binding_another_private_abi_under_the_right_name(facts):
    image = facts("trixie")
    mlx5 = next(p for p in image.rdma.providers if p.name == "mlx5")
    bad = dataclasses.replace(mlx5, private_abi_needed=57)  # e.g. a v57 build renamed by hand
    mixed = replace_in(image, "rdma.providers", tuple(p if p.name != "mlx5" else bad for p in image.rdma.providers))
    f = by_id(run(mixed, node("mofed-23.10-open-550-peermem")), "RDMA-PABI-MISMATCH")
    # the provider-directory attempt fails on the version; the warning shows the last (search path) attempt
    assert f.predicted_error.startswith("libibverbs: Warning: couldn't load driver 'libmlx5-rdmav34.so'")
    assert f.severity == "error"
    assert any(e.fact == "image.rdma.providers.mlx5.private_abi_needed" and e.value == 57 for e in f.evidence)


def test_mismatch_on_a_provider_the_node_does_not_use_is_a_warning(facts):
    image = facts("bookworm")
    efa = next(p for p in image.rdma.providers if p.name == "efa")
    mixed = replace_in(
        image,
        "rdma.providers",
        tuple(p if p.name != "efa" else dataclasses.replace(efa, pabi=33) for p in image.rdma.providers),
    )
    f = by_id(run(mixed, node("inbox-5.15-proprietary-535")), "RDMA-PABI-MISMATCH")
    assert f.severity == "warning" and "efa" in f.title


def test_unreadable_private_abi_is_unknown_not_a_pass(facts):
    image = replace_in(facts("bookworm"), "rdma.libibverbs.private_abi", None)
    result = run(image, node("inbox-6.8-open-570"))
    assert "RDMA-PABI-MISMATCH" in unknown_rules(result)
    assert "RDMA-PABI-MISMATCH" not in ids(result)


def test_no_mlx5_provider(facts):
    image = facts("bookworm")
    no_mlx5 = replace_in(image, "rdma.providers", tuple(p for p in image.rdma.providers if p.name != "mlx5"))
    f = by_id(run(no_mlx5, node("doca-24.10-open-580-peermem")), "RDMA-NO-MLX5-PROVIDER")
    assert f.predicted_error == "NCCL INFO NET/IB : No device found."
    assert "libmlx5-rdmav34.so" in f.mechanism
    # a node whose devices are unknown: the rule cannot decide
    hand = node("handwritten-minimal")
    assert "RDMA-NO-MLX5-PROVIDER" in unknown_rules(run(no_mlx5, hand))
    # a node without RDMA: nothing to say
    assert "RDMA-NO-MLX5-PROVIDER" not in ids(run(no_mlx5, node("cpu-no-rdma")))


def test_no_libibverbs(facts):
    bare = replace_in(facts("bookworm"), "rdma.libibverbs", None)
    bare = replace_in(bare, "rdma.providers", ())
    result = run(with_nccl(bare, "2.21.5"), node("mofed-23.10-open-550-peermem"))
    f = by_id(result, "RDMA-NO-LIBIBVERBS")
    assert f.severity == "warning" and f.predicted_error == "NCCL INFO Failed to open libibverbs.so[.1]"
    # nothing else about RDMA or GPUDirect: NCCL never reaches the verbs layer
    assert [f.id for f in result.findings if f.severity != "info"] == ["RDMA-NO-LIBIBVERBS"]
    assert not [r for r in unknown_rules(result) if r.startswith(("GDR", "DMABUF", "MEMLOCK"))]
    assert "RDMA-NO-LIBIBVERBS" not in ids(run(bare, node("cpu-no-rdma")))
    assert "RDMA-NO-LIBIBVERBS" in unknown_rules(run(bare, replace_in(node("handwritten-minimal"), "rdma.stack", None)))


def test_uverbs_abi_range(facts):
    image = facts("bookworm")
    assert "UVERBS-ABI-RANGE" not in ids(run(image, node("inbox-6.8-open-570")))
    f = by_id(run(image, replace_in(node("inbox-6.8-open-570"), "rdma.uverbs_abi", 7)), "UVERBS-ABI-RANGE")
    assert f.predicted_error == "libibverbs: Fatal: kernel ABI version 7 doesn't match library version 6."
    n = node("inbox-6.8-open-570")
    bad_dev = dataclasses.replace(n.rdma.devices[0], uverbs_abi=2)
    n = replace_in(n, "rdma.devices", (bad_dev,) + n.rdma.devices[1:])
    f = by_id(run(image, n), "UVERBS-ABI-RANGE")
    assert "Driver mlx5 does not support the kernel ABI of 2" in f.predicted_error
    assert "UVERBS-ABI-RANGE" in unknown_rules(run(image, node("handwritten-minimal")))


@pytest.mark.parametrize(
    "node_name, words",
    [
        ("inbox-6.8-open-570", "accepts the flag"),
        ("mofed-5.8-proprietary-535-peermem", "accepts the flag"),
    ],
)
def test_relaxed_ordering_is_safe_by_construction(facts, node_name, words):
    image = with_nccl(facts("bullseye"), "2.18.3")
    f = by_id(run(image, node(node_name)), "RO-MASKED-SAFE")
    assert f.severity == "info" and f.confidence == "verified" and f.predicted_error is None
    assert words in f.mechanism and "1.11.33.2" in f.mechanism


def test_relaxed_ordering_on_an_old_kernel_is_masked(facts):
    old = replace_in(node("inbox-5.15-proprietary-535"), "kernel.release", "5.4.0-150-generic")
    f = by_id(run(with_nccl(facts("bookworm"), "2.18.3"), old), "RO-MASKED-SAFE")
    assert "libibverbs clears the flag" in f.mechanism


def test_relaxed_ordering_variants(facts):
    image = facts("bookworm")
    off = with_nccl(image, "2.18.3", nccl_conf={"NCCL_IB_PCI_RELAXED_ORDERING": "0"})
    f = by_id(run(off, node("inbox-6.8-open-570")), "RO-MASKED-SAFE")
    assert "/etc/nccl.conf" in f.title
    legacy = replace_in(with_nccl(image, "2.18.3"), "rdma.libibverbs.has_reg_mr_iova2", False)
    f = by_id(run(legacy, node("inbox-6.8-open-570")), "RO-MASKED-SAFE")
    assert "will not use relaxed ordering" in f.title
    # NCCL before 2.12.7 never requests RO: no note
    assert "RO-MASKED-SAFE" not in ids(run(with_nccl(image, "2.11.4"), node("inbox-6.8-open-570")))
