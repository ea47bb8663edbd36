"""Which facts each warning of issue 32's family rests on, and whether each is decided or assumed (issue 32: warnings
that fired the same on a failing and a working configuration). A warning counts in the verdict only when every fact
its trigger needs is decided; a trigger only the job's program or an unread launch shows is assumed, and the finding
is conditional (Finding.assumes, assumed_facts)."""

from __future__ import annotations

import dataclasses
import os
import shutil

import pytest
from engine_facts import by_id, committed_facts, matrix, with_nccl

from imgcheck.engine import evaluate
from imgcheck.job.model import RUNTIME_HOST, EnvVar, JobFacts
from imgcheck.model.node import NodeMig
from imgcheck.node.probe import probe

FIXTURES = os.path.join(os.path.dirname(__file__), "node", "fixtures")
H100 = "inbox-ubuntu2404-open"  # an H100 node laid out as the probe reads it (tests/node/fixtures/README.md)
# a MIG UUID of a PyTorch maintainer's example in https://github.com/pytorch/pytorch/issues/92315
ONE_MIG = "MIG-89c850dc-38e3-57df-85c7-690c186b68e9"

# rule -> (facts decided before it warns, facts it assumes when they are not decided): the basis of each warning
BASIS = {
    "NODE-MIG-NCCL": (("node.mig.gpu_instances", "job MIG devices", "job.ranks_per_node"), ("job.mig_devices",)),
    "NCCL-RELEASE-KNOWN-ISSUE": (("image.nccl", "cuMem state (derived)", "node/launch conditions"), ("job.workload",)),
}


@pytest.fixture(scope="module")
def node():
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        dest = os.path.join(tmp, "root")
        shutil.copytree(os.path.join(FIXTURES, H100), dest, symlinks=True)
        probed = probe(dest)
    return dataclasses.replace(probed, mig=NodeMig(gpu_instances={"gpu0": 7}))


def job(ranks: int | None = None, **env: str) -> JobFacts:
    return JobFacts(
        path="train.sh",
        kind="mpirun",
        runtime=RUNTIME_HOST,
        ranks_per_node=ranks,
        env=tuple(EnvVar(k, v) for k, v in env.items()),
    )


def run(image, node, launch=None):
    return evaluate(image, node, matrix(), job=launch)


@pytest.fixture(scope="module")
def image():
    return with_nccl(committed_facts("bookworm"), "2.19.3")


def test_mig_on_the_node_alone_is_assumed_not_warned(image, node):
    found = by_id(run(image, node), "NODE-MIG-NCCL")
    assert found.assumes and found.assumed_facts == BASIS["NODE-MIG-NCCL"][1]


def test_mig_one_instance_per_process_ranks_not_stated_is_assumed(image, node):
    """mlcommons/training#442's working form: each process gets one MIG device; how many ranks is not stated."""
    found = by_id(run(image, node, job(CUDA_VISIBLE_DEVICES=ONE_MIG)), "NODE-MIG-NCCL")
    assert found.assumes and any(e.value == ONE_MIG for e in found.evidence)


def test_mig_devices_and_several_ranks_per_node_warn(image, node):
    found = by_id(run(image, node, job(4, CUDA_VISIBLE_DEVICES=ONE_MIG)), "NODE-MIG-NCCL")
    assert found.severity == "warning" and not found.assumes


def test_mig_devices_one_rank_per_node_is_decided_quiet(image, node):
    result = run(image, node, job(1, CUDA_VISIBLE_DEVICES=ONE_MIG))
    assert "NODE-MIG-NCCL" not in {f.id for f in result.findings} | {u.rule for u in result.unknowns}


def _a2a(result):
    return next((f for f in result.findings if f.id == "NCCL-RELEASE-KNOWN-ISSUE" and "all-to-all" in f.title), None)


def test_cumem_a2a_deadlock_assumes_the_collective(image, node):
    """nccl#1134: NCCL 2.19 with NCCL_CUMEM_ENABLE=1: cuMem is decided, the all-to-all at scale is the job's."""
    found = _a2a(run(image, node, job(8, NCCL_CUMEM_ENABLE="1")))
    assert found is not None and "job.workload" in found.assumed_facts
    assert found.severity == "warning" and found.assumes


def test_cumem_a2a_deadlock_needs_cumem_on(image, node):
    assert _a2a(run(image, node, job(8, NCCL_CUMEM_ENABLE="0"))) is None


def test_every_workload_condition_of_a_known_issue_is_marked():
    """Conditions in words are the workload's only when marked workload:; the rest name a node or launch fact."""
    for row in matrix().rows("nccl_known_issues"):
        for cond in row.get("conditions") or ():
            if any(w in cond for w in ("the workload decides", "the application's")):
                assert cond.startswith("workload:"), (row["issue"], cond)
