"""Differences between nodes that matter to a job spanning them: link layer, RoCE MTU, RDMA stack,
adapter firmware, GPU driver branch. Each finding names the groups, by value, and all their nodes.

Pure: node facts and the matrix in, findings out. Only nodes whose value is known take part, so a
node with an unreadable fact never makes a difference appear.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from typing import Any, TypeVar

from ..knowledge.ucx_gid import best_class, v2_ipv4_indexes
from ..matrix import Matrix
from ..model.node import NodeFacts, RdmaPort
from ..model.report import Evidence, Finding
from ..versions.ecosystems import numeric_tuple
from .context import MLNX_STACKS, series_of
from .emit import finding

RULES = (
    "FLEET-LINK-LAYER-MIXED",
    "FLEET-MTU-MIXED",
    "FLEET-STACK-MIXED",
    "FLEET-FW-MIXED",
    "FLEET-DRIVER-BRANCH-MIXED",
    "FLEET-ROCE-GID-MIXED",
    "FLEET-ROCE-GID-INDEX-DIFFERS",
)
# The facts each rule needs present (absent: the rule does not apply) and the further facts it reads;
# silence with one of them unknown is reported as unknown (engine/contract.py).
REQUIRES = {
    "FLEET-LINK-LAYER-MIXED": (),
    "FLEET-MTU-MIXED": (),
    "FLEET-STACK-MIXED": (),
    "FLEET-FW-MIXED": (),
    "FLEET-DRIVER-BRANCH-MIXED": (),
    "FLEET-ROCE-GID-MIXED": (),
    "FLEET-ROCE-GID-INDEX-DIFFERS": (),
}
READS = {
    "FLEET-LINK-LAYER-MIXED": (),
    "FLEET-MTU-MIXED": (),
    "FLEET-STACK-MIXED": (),
    "FLEET-FW-MIXED": (),
    "FLEET-DRIVER-BRANCH-MIXED": (),
    "FLEET-ROCE-GID-MIXED": (),
    "FLEET-ROCE-GID-INDEX-DIFFERS": (),
}
ACTIVE = "4: ACTIVE"
_SHOWN = 6  # node names listed per group before "+N more"
K = TypeVar("K", bound=Hashable)


def _active_ports(node: NodeFacts) -> list[RdmaPort]:
    return [p for d in node.rdma.devices for p in d.ports if p.state == ACTIVE]


def _link_layers(node: NodeFacts) -> str | None:
    layers = sorted({p.link_layer for p in _active_ports(node) if p.link_layer})
    return "+".join(layers) or None


def _roce_mtu(node: NodeFacts) -> int | None:
    mtus = [p.active_mtu for p in _active_ports(node) if p.link_layer == "Ethernet" and p.active_mtu]
    return min(mtus) if mtus else None


def _stack(node: NodeFacts) -> str | None:
    stack = node.rdma.stack
    if stack in MLNX_STACKS:
        series = series_of(node.rdma.ofed_version)
        return f"{stack} {series}" if series else None  # a release we cannot place is not a difference
    return stack if stack == "inbox" else None


def _roce_ports(node: NodeFacts) -> list[RdmaPort]:
    return [p for p in _active_ports(node) if p.link_layer == "Ethernet"]


def _gid_class(node: NodeFacts) -> str | None:
    """The best GID entry kind the node's active RoCE ports offer (all ports alike, else None: a node whose ports
    differ, or whose table was not read, takes no part)."""
    classes = {best_class(p) for p in _roce_ports(node)}
    return classes.pop() if len(classes) == 1 and None not in classes else None


def _v2_ipv4_index(node: NodeFacts) -> int | None:
    """The lowest entry that is RoCE v2 IPv4-mapped on every active RoCE port of the node (None: none, or unread)."""
    sets = [v2_ipv4_indexes(p) for p in _roce_ports(node)]
    if not sets or any(s is None for s in sets):
        return None
    common = frozenset.intersection(*(s for s in sets if s is not None))
    return min(common) if common else None


def _driver_branch(node: NodeFacts) -> str | None:
    nums = numeric_tuple(node.gpu.driver_version or "")
    return f"R{nums[0]}" if nums else None


def _groups(nodes: Iterable[NodeFacts], value_of: Callable[[NodeFacts], K | None]) -> dict[K, list[str]]:
    groups: dict[K, list[str]] = {}
    for node in nodes:
        value = value_of(node)
        if value is not None:
            groups.setdefault(value, []).append(node.name)
    return groups


def _words(groups: Mapping[Any, Sequence[str]]) -> str:
    parts = []
    for value, names in groups.items():
        shown = ", ".join(names[:_SHOWN]) + (f" +{len(names) - _SHOWN} more" if len(names) > _SHOWN else "")
        parts.append(f"{value} on {shown}")
    return " vs ".join(parts)


def _evidence(fact: str, groups: Mapping[Any, Sequence[str]]) -> list[Evidence]:
    return [Evidence(f"fleet.{fact}", f"{value}: {len(names)} node(s)") for value, names in groups.items()]


def _members(groups: Mapping[Any, Sequence[str]]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(n for names in groups.values() for n in names))


def compare(nodes: Iterable[NodeFacts], matrix: Matrix) -> list[Finding]:
    """Findings for differences between nodes (empty for one node or a uniform fleet)."""
    nodes = list(nodes)
    if len(nodes) < 2:
        return []
    out: list[Finding] = []

    def emit(rule: str, fact: str, groups: Mapping[Any, Sequence[str]], **params: Any) -> None:
        f = finding(matrix, rule, _evidence(fact, groups), groups=_words(groups), **params)
        out.append(_with_nodes(f, _members(groups)))

    layers = _groups(nodes, _link_layers)
    pure = {k: v for k, v in layers.items() if "+" not in k}  # a node with both kinds reaches either group
    if len(pure) > 1:
        emit("FLEET-LINK-LAYER-MIXED", "link_layer", pure)
    mtus = _groups(nodes, _roce_mtu)
    if len(mtus) > 1:
        emit("FLEET-MTU-MIXED", "roce_active_mtu", mtus)
    stacks = _groups(nodes, _stack)
    if len(stacks) > 1:
        emit("FLEET-STACK-MIXED", "rdma_stack", stacks)
    hca_types = sorted({d.hca_type for n in nodes for d in n.rdma.devices if d.hca_type and d.fw_ver})
    for hca_type in hca_types:

        def fw_of(n: NodeFacts, t: str = hca_type) -> str | None:
            return ",".join(sorted({d.fw_ver for d in n.rdma.devices if d.hca_type == t and d.fw_ver})) or None

        fw = _groups(nodes, fw_of)
        if len(fw) > 1:
            emit("FLEET-FW-MIXED", f"fw_ver.{hca_type}", fw, hca_type=hca_type)
    classes = _groups(nodes, _gid_class)
    if len(classes) > 1:
        emit("FLEET-ROCE-GID-MIXED", "roce_gid_class", classes)
    indexes = _groups(nodes, _v2_ipv4_index)
    if len(indexes) > 1 and len(classes) <= 1:
        emit("FLEET-ROCE-GID-INDEX-DIFFERS", "roce_v2_ipv4_gid_index", indexes)
    branches = _groups(nodes, _driver_branch)
    if len(branches) > 1:
        emit("FLEET-DRIVER-BRANCH-MIXED", "driver_branch", branches)
    return out


def _with_nodes(f: Finding, names: tuple[str, ...]) -> Finding:
    import dataclasses

    return dataclasses.replace(f, nodes=names)
