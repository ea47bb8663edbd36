"""NCCL-LACKS-GPU-ARCH on committed real facts (Debian bookworm's rdma userspace) plus the NCCL architectures and the
committed node fixtures' GPUs (the MLNX_OFED 23.10 node has H100s, the inbox 5.15 node A100s)."""

from __future__ import annotations

import dataclasses

import pytest
from engine_facts import by_id, committed_facts, matrix, node, unknown_rules, with_nccl

from imgcheck.engine import evaluate
from imgcheck.knowledge.gpus import compute_capability, runs_on
from imgcheck.model.image import Nccl

RULE = "NCCL-LACKS-GPU-ARCH"
LIB = "/opt/nccl/lib/libnccl.so.2.22.3"


def image(sass, ptx=()):
    base = with_nccl(committed_facts("bookworm"), "2.22.3", "library")
    lib = Nccl("2.22.3", LIB, None, "library", sass_archs=sass, ptx_archs=ptx, archs_from=LIB)
    return dataclasses.replace(base, nccl=(lib,))


def run(img, node_name="mofed-23.10-open-550-peermem", **changes):
    return evaluate(img, node(node_name, **changes), matrix())


def found(result):
    return [f for f in result.findings if f.id == RULE]


def test_sm80_only_build_on_h100_is_an_error():
    result = run(image((80,)))  # the thread's NVCC_GENCODE=-gencode=arch=compute_80,code=sm_80, on H100
    f = by_id(result, RULE)
    assert f.severity == "error" and "9.0" in f.title and "named symbol not found" in (f.predicted_error or "")
    assert "compute_90,code=sm_90" in " ".join(f.fixes)
    facts = {e.fact: e for e in f.evidence}
    assert facts["image.nccl.sass_archs"].value == "sm_80" and facts["image.nccl.sass_archs"].path == LIB
    assert facts["image.nccl.ptx_archs"].value == "none"
    assert facts["node.gpu.gpus.name"].value == "NVIDIA H100 80GB HBM3"
    # the same build is fine on the A100 node
    assert found(run(image((80,)), "inbox-5.15-proprietary-535")) == []


def test_sm90_cubin_or_lower_ptx_covers_h100():
    assert found(run(image((80, 90)))) == []
    assert found(run(image((80,), (80,)))) == []  # PTX for 8.0 is JIT-compiled for 9.0
    assert found(run(image((), (90,)))) == []


def test_a_newer_cubin_does_not_cover_an_older_gpu():
    # Kepler K40m (3.5) with a build whose lowest code is sm_37 cubins and compute_80 PTX (NVIDIA/nccl#444)
    gpus = node("mofed-23.10-open-550-peermem").gpu
    k40 = dataclasses.replace(gpus, gpus=tuple(dataclasses.replace(g, name="Tesla K40m") for g in gpus.gpus))
    f = by_id(run(image((37, 50, 60, 70, 75, 80), (80,)), gpu=k40), RULE)
    assert "Tesla K40m" in f.title and "3.5" in f.title
    assert found(run(image((35, 50), ()), gpu=k40)) == []


def test_unknown_architectures_or_gpu_are_unknowns_not_findings():
    # inspect looked and read no fat binary: an unknown naming why
    why = {"nccl.sass_archs": f"no fat binary was read from the libnccl of {LIB}"}
    unread = run(dataclasses.replace(image(None, None), unknown=why))
    assert found(unread) == [] and RULE in unknown_rules(unread)
    assert LIB in next(u.reason for u in unread.unknowns if u.rule == RULE)
    # facts that never carried the architectures (a catalog reading, older facts): nothing to say
    assert RULE not in unknown_rules(run(image(None, None)))
    gpus = node("mofed-23.10-open-550-peermem").gpu
    odd = dataclasses.replace(gpus, gpus=tuple(dataclasses.replace(g, name="NVIDIA H800") for g in gpus.gpus))
    result = run(image((80,)), gpu=odd)  # H800 is not on NVIDIA's compute capability page: no guess
    assert found(result) == [] and RULE in unknown_rules(result)


@pytest.mark.parametrize(
    ("name", "cc"),
    [
        ("NVIDIA H100 80GB HBM3", (9, 0)),
        ("NVIDIA A100-SXM4-80GB", (8, 0)),
        ("Tesla K40m", (3, 5)),
        ("Tesla K80", (3, 7)),
        ("NVIDIA B200", (10, 0)),
        ("NVIDIA GB300", (10, 3)),
        ("NVIDIA GeForce RTX 5090", (12, 0)),
        ("NVIDIA L40S", (8, 9)),
        ("NVIDIA A10G", None),
    ],
)
def test_compute_capability_table(name, cc):
    got = compute_capability(name, matrix())
    assert (got[:2] if got else None) == cc


def test_binary_compatibility():
    assert runs_on(10, 3, (100,), ())  # sm_100 cubins on a 10.3 B300
    assert not runs_on(10, 0, (103,), ())  # but not the other way round
    assert not runs_on(12, 0, (100,), ())  # another major: cubins never cross
    assert runs_on(12, 0, (), (100,))  # PTX does, forward
    assert not runs_on(8, 0, (), (90,))  # never backward
