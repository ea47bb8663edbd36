"""UCX's RoCE GID entry (engine/ucx_gid.py): UCX_IB_GID_INDEX pinned against the node's GID table, and UCX's own
choice (openucx/ucx src/uct/ib/base/ib_device.c uct_ib_device_select_gid) simulated from it.

The node is the probe's inbox-ubuntu2204 fixture (a ConnectX-6 GID table as sysfs lays it out: mlx5_0 has link-local
v1/v2 pairs at 0-3 and the IPv4 pair at 4-5; mlx5_1 only its link-local pair, no IPv4 address); the image is the
committed facts of the real Debian bookworm image (UCX 1.13.1 from libucx0)."""

from __future__ import annotations

import dataclasses
import os

import pytest
from engine_facts import committed_facts, matrix

from imgcheck.engine import evaluate
from imgcheck.knowledge.ucx_gid import best_class, ucx_choice
from imgcheck.model.node import GidEntry, RdmaPort
from imgcheck.node.probe import probe

ROCE_ROOT = os.path.join(os.path.dirname(__file__), "node", "fixtures", "inbox-ubuntu2204")
MATRIX = matrix()
AUTO = "UCX-ROCE-GID-AUTO-NOT-ROUTABLE"


@pytest.fixture(scope="module")
def roce():
    return probe(ROCE_ROOT)


def image(**env):
    facts = committed_facts("bookworm")
    assert facts.ucx is not None and facts.ucx.version == "1.13.1"
    return dataclasses.replace(facts, env={**facts.env, **env})


def by_rule(result, rule):
    return [f for f in result.findings if f.id == rule], [u for u in result.unknowns if u.rule == rule]


def test_ucx_choice_follows_the_priorities(roce):
    mlx5_0, mlx5_1 = (d.ports[0] for d in roce.rdma.devices)
    choice, _how = ucx_choice(mlx5_0, prefer_global=False)
    assert (choice.index, choice.kind, choice.version) == (5, "ipv4-mapped", "RoCE v2")
    choice, _how = ucx_choice(mlx5_1, prefer_global=None)  # both orders agree: the v2 link-local entry
    assert (choice.index, choice.kind) == (1, "link-local")
    assert ucx_choice(mlx5_0, False, subnets="10.0.0.0/8")[0] is None  # the subnet filter is not simulated
    assert best_class(mlx5_0) == "RoCE v2 IPv4" and best_class(mlx5_1) == "RoCE v2 link-local only"


def test_global_ipv6_is_preferred_only_from_the_later_release():
    # the kernel's table for a port with a global IPv6 address and no IPv4: link-local pair, then the global pair
    port = RdmaPort(
        port=1,
        link_layer="Ethernet",
        gid_table_len=256,
        gids_read=256,
        gids=(
            GidEntry(0, "IB/RoCE v1", kind="link-local"),
            GidEntry(1, "RoCE v2", kind="link-local"),
            GidEntry(2, "IB/RoCE v1", kind="global"),
            GidEntry(3, "RoCE v2", kind="global"),
        ),
    )
    assert ucx_choice(port, prefer_global=False)[0].index == 1
    assert ucx_choice(port, prefer_global=True)[0].index == 3
    assert ucx_choice(port, prefer_global=None)[0] is None  # the release decides: say so, never guess
    assert best_class(port) == "RoCE v2 global IPv6"


def test_auto_choice_link_local_port_warns(roce):
    (f,), _ = by_rule(evaluate(image(), roce, MATRIX), AUTO)
    assert f.severity == "warning" and "mlx5_1:1" in f.mechanism and "mlx5_0:1" not in f.mechanism
    assert "IPv4 address" in f.fixes[0]


def test_auto_choice_on_the_routable_port_is_quiet(roce):
    findings, unknowns = by_rule(evaluate(image(UCX_NET_DEVICES="mlx5_0:1"), roce, MATRIX), AUTO)
    assert not findings and not unknowns


def test_transports_without_rdma_do_not_use_a_gid(roce):
    findings, unknowns = by_rule(evaluate(image(UCX_TLS="tcp,sm,self"), roce, MATRIX), AUTO)
    assert not findings and not unknowns


@pytest.mark.parametrize(
    ("index", "rule", "what"),
    [
        ("2", "ENV-UCX-IB-GID-INDEX-ROCE-V1", "v1"),
        ("4", "ENV-UCX-IB-GID-INDEX-ROCE-V1", "v1"),
        ("3", "ENV-UCX-IB-GID-INDEX-LINK-LOCAL", "link-local"),
        ("7", "ENV-UCX-IB-GID-INDEX-NO-GID", "zero"),
        ("300", "ENV-UCX-IB-GID-INDEX-NO-GID", "beyond"),
    ],
)
def test_pinned_index_against_the_table(roce, index, rule, what):
    result = evaluate(image(UCX_IB_GID_INDEX=index, UCX_NET_DEVICES="mlx5_0:1"), roce, MATRIX)
    (f,), _ = by_rule(result, rule)
    assert f"mlx5_0:1 ({what})" in f.title and "5" in f.fixes[-1]  # entry 5: the RoCE v2 IPv4 entry
    assert not by_rule(result, AUTO)[0]  # a pinned index is not UCX's own choice


def test_pinned_routable_index_is_quiet(roce):
    result = evaluate(image(UCX_IB_GID_INDEX="5", UCX_NET_DEVICES="mlx5_0:1"), roce, MATRIX)
    assert not [f for f in result.findings if "GID" in f.id]


def test_no_ucx_no_finding(roce):
    facts = dataclasses.replace(image(UCX_IB_GID_INDEX="3"), ucx=None)
    result = evaluate(facts, roce, MATRIX)
    assert not [f for f in result.findings if f.id.startswith(("ENV-UCX-IB-GID", AUTO))]


def test_unknown_ucx_gives_a_conditional_finding(roce):
    facts = dataclasses.replace(
        image(UCX_IB_GID_INDEX="3"), ucx=None, unknown={**image().unknown, "ucx": "not read (test)"}
    )
    result = evaluate(facts, roce, MATRIX)
    hits = [f for f in result.findings if f.id == "ENV-UCX-IB-GID-INDEX-LINK-LOCAL"]
    assert hits and all(f.assumes for f in hits)  # never counted in the verdict: UCX is only hypothesised


def test_hand_written_gids_get_their_kind_and_a_listed_entry_is_known(roce):
    """A node facts file written from show_gids lists entries with their address and type but not the kind or the
    table's length: the kind follows from the address, and a listed entry is known without the length."""
    from imgcheck.model.node_io import parse_node_facts

    doc = {
        "name": "roce-hand",
        "rdma": {
            "stack": "inbox",
            "devices": [
                {
                    "name": "mlx5_2",
                    "ports": [
                        {
                            "port": 1,
                            "state": "4: ACTIVE",
                            "link_layer": "Ethernet",
                            "gids": [
                                {"index": 0, "type": "IB/RoCE v1", "gid": "fe80:0000:0000:0000:0268:8aff:fe01:0001"},
                                {"index": 1, "type": "RoCE v2", "gid": "fe80:0000:0000:0000:0268:8aff:fe01:0001"},
                                {"index": 3, "type": "RoCE v2", "gid": "0000:0000:0000:0000:0000:ffff:0b00:0001"},
                            ],
                        }
                    ],
                }
            ],
        },
    }
    node = parse_node_facts(doc, "hand.json")
    port = node.rdma.devices[0].ports[0]
    assert [g.kind for g in port.gids] == ["link-local", "link-local", "ipv4-mapped"]
    assert port.gid_entry(1)[0] == "entry" and port.gid_entry(2)[0] == "unknown"  # length unknown: 2 may be zero
    (f,), _ = by_rule(evaluate(image(UCX_IB_GID_INDEX="1"), node, MATRIX), "ENV-UCX-IB-GID-INDEX-LINK-LOCAL")
    assert "mlx5_2:1 (link-local)" in f.title and f.fixes[-1].endswith("(here: 3)")
    _, (u,) = by_rule(evaluate(image(UCX_IB_GID_INDEX="2"), node, MATRIX), "ENV-UCX-IB-GID-INDEX-NO-GID")
    assert "table's length is unknown" in u.reason
