"""GID address kinds (link-local, IPv4-mapped) read by the probe, NCCL's own GID choice simulated from the table
(NVIDIA/nccl ncclIbGetGidIndex), and ENV-NCCL-IB-GID-INDEX-LINK-LOCAL: the RoCE fixture's mlx5_0 is a ConnectX-6
GID table as `show_gids` lists it (link-local v1/v2 pairs at 0-3, the IPv4 pair 172.19.0.60 at 4-5)."""

from __future__ import annotations

import dataclasses
import os

import pytest
from engine_facts import committed_facts, matrix, with_nccl

from imgcheck.engine import evaluate
from imgcheck.job import EnvVar, load_job_spec
from imgcheck.knowledge.nccl_gid import nccl_choice
from imgcheck.node.gid_kind import gid_kind, ipv4_of
from imgcheck.node.probe import probe

HERE = os.path.dirname(__file__)
SPEC = os.path.join(HERE, "specs", "pod-roce-hostnetwork.yaml")
ROCE_ROOT = os.path.join(HERE, "..", "node", "fixtures", "inbox-ubuntu2204")
RULE = "ENV-NCCL-IB-GID-INDEX-LINK-LOCAL"
MATRIX = matrix()


@pytest.fixture(scope="module")
def roce():
    return probe(ROCE_ROOT)


def pod(**env):
    (job,) = load_job_spec(SPEC)
    keep = tuple(v for v in job.env if v.name not in env)
    return dataclasses.replace(job, env=keep + tuple(EnvVar(k, v) for k, v in env.items() if v is not None))


def found(result):
    return [f for f in result.findings if f.id == RULE], [u for u in result.unknowns if u.rule == RULE]


def test_kinds_as_nccl_tests_them():
    assert gid_kind("fe80:0000:0000:0000:0e42:a1ff:fe5d:4db8") == "link-local"
    assert gid_kind("0000:0000:0000:0000:0000:ffff:ac13:003c") == "ipv4-mapped"
    assert ipv4_of("0000:0000:0000:0000:0000:ffff:ac13:003c") == "172.19.0.60"
    assert gid_kind("fd00:0000:0000:0001:0000:0000:0000:0005") == "global"
    assert gid_kind("fe80:0000:0000:0000:0000:0000:0000:0000") == "unconfigured"  # configuredGid() is false
    assert gid_kind("not:a:gid") is None


def test_probe_records_each_entry_kind_and_nccl_choice(roce):
    mlx5_0 = roce.rdma.devices[0].ports[0]
    assert [(g.index, g.kind) for g in mlx5_0.gids] == [
        (0, "link-local"),
        (1, "link-local"),
        (2, "link-local"),
        (3, "link-local"),
        (4, "ipv4-mapped"),
        (5, "ipv4-mapped"),
    ]
    assert nccl_choice(mlx5_0)[0] == 5  # AF_INET, RoCE v2: the IPv4 v2 entry
    assert nccl_choice(mlx5_0, roce_version=1)[0] == 4
    assert nccl_choice(mlx5_0, family="AF_INET6")[0] == 0  # no valid IPv6 entry: NCCL stays at 0
    # mlx5_1 has only its link-local pair (no IPv4 address): NCCL keeps entry 0
    assert nccl_choice(roce.rdma.devices[1].ports[0])[0] == 0
    assert nccl_choice(mlx5_0, addr_range="172.19.0.0/16")[0] is None


def test_pinned_link_local_v2_warns_with_nccl_own_choice(roce):
    image = with_nccl(committed_facts("bookworm"), "2.21.5")
    (f,), _ = found(evaluate(image, roce, MATRIX, job=pod(NCCL_IB_GID_INDEX="3", NCCL_IB_HCA="=mlx5_0")))
    assert f.severity == "warning" and "mlx5_0:1 (entry 3: fe80::/64)" in f.title
    assert "entry 5 (ipv4-mapped, RoCE v2)" in f.mechanism and "unset NCCL_IB_GID_INDEX" in f.fixes[0]
    # with the image asking for IPv6 GIDs, NCCL's own choice changes, and the text says so
    image6 = with_nccl(committed_facts("bookworm"), "2.21.5", env={"NCCL_IB_ADDR_FAMILY": "AF_INET6"})
    (f6,), _ = found(evaluate(image6, roce, MATRIX, job=pod(NCCL_IB_GID_INDEX="3", NCCL_IB_HCA="=mlx5_0")))
    assert "entry 0 (link-local, IB/RoCE v1)" in f6.mechanism


@pytest.mark.parametrize("value", ["5", "-1", None])
def test_routable_or_nccl_choice_is_quiet(roce, value):
    image = with_nccl(committed_facts("bookworm"), "2.21.5")
    assert found(evaluate(image, roce, MATRIX, job=pod(NCCL_IB_GID_INDEX=value, NCCL_IB_HCA="=mlx5_0"))) == ([], [])


def test_link_local_only_port_is_not_blamed(roce):
    # mlx5_1 has no routable entry at all: pinning its link-local v2 entry is the only choice there is
    image = with_nccl(committed_facts("bookworm"), "2.21.5")
    assert found(evaluate(image, roce, MATRIX, job=pod(NCCL_IB_GID_INDEX="1", NCCL_IB_HCA="=mlx5_1"))) == ([], [])


def test_nccl_own_choice_on_a_port_without_a_routable_entry(roce):
    # mlx5_1's netdev ens2f0np0 has no IPv4 address: its table holds only the link-local pair, NCCL keeps entry 0
    image = with_nccl(committed_facts("bookworm"), "2.21.5")
    (f,), _ = found(evaluate(image, roce, MATRIX, job=pod(NCCL_IB_GID_INDEX=None, NCCL_IB_HCA="=mlx5_1")))
    assert "mlx5_1:1 entry 0" in f.title and "netdev ens2f0np0: IPv6 link-local only" in f.title
    # mlx5_0 has the IPv4 entry NCCL picks: nothing to say
    assert found(evaluate(image, roce, MATRIX, job=pod(NCCL_IB_GID_INDEX=None, NCCL_IB_HCA="=mlx5_0"))) == ([], [])
    # NCCL before automatic selection uses entry 0 itself: that is the v1 rule's case, not this variant's
    old = with_nccl(committed_facts("bookworm"), "2.18.5")
    fs, _ = found(evaluate(old, roce, MATRIX, job=pod(NCCL_IB_GID_INDEX=None, NCCL_IB_HCA="=mlx5_1")))
    assert all("can only pick" not in f.title for f in fs)
