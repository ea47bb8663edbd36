"""From image facts and many nodes to one Report: nodes with identical facts are evaluated once."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, TypeVar

from .. import __version__
from ..errors import BadInputError
from ..job.model import JobFacts
from ..matrix import Matrix
from ..model.image import ImageFacts
from ..model.node import NodeFacts
from ..model.report import Finding, Report, Suppression, Unknown, finding_rank, outcome_of, verdict_of
from ..model.serde import to_dict
from . import fleet_compare
from .evaluate import Evaluation
from .evaluate import evaluate as evaluate  # re-exported: recommend/candidates.py calls it (tests patch it here)

# Facts that name or describe a node without changing what the engine predicts for it, and its provenance
# (per-node files differ only there): a group's evidence is located where its first node's facts were read.
_IDENTITY_FIELDS = ("name", "collected_at", "labels", "sources", "origin")


@dataclass(frozen=True)
class FleetResult:
    findings: tuple[Finding, ...]
    unknowns: tuple[Unknown, ...]
    evaluations: int  # engine runs: one per group of nodes with identical facts


def fleet_key(node: NodeFacts) -> str:
    doc = to_dict(node)
    for name in _IDENTITY_FIELDS:
        doc.pop(name, None)
    _drop_addresses(doc)
    return json.dumps(doc, sort_keys=True)


def _shape(address: str) -> str:
    """An address or route with its host part left out: '172.19.0.60/24' -> '/24', 'fe80::1/64 link' -> '/64 link',
    'default via 172.19.0.1' -> 'default'. Rules judge only these shapes (what kind of address a port or interface
    has), never one node's values, so nodes that differ only in their addresses share one evaluation."""
    if address.startswith("default"):
        return "default"
    _addr, _, rest = address.partition("/")
    return "/" + rest.split(" via ")[0] if rest else address


def _drop_addresses(doc: dict[str, Any]) -> None:
    """Per-node values (interface addresses, GID values, NUMA memory sizes) out of the grouping key."""
    for iface in doc.get("net_interfaces") or ():
        for key in ("ipv4", "ipv6", "routes"):
            if iface.get(key) is not None:
                iface[key] = sorted(_shape(a) for a in iface[key])
    for device in (doc.get("rdma") or {}).get("devices") or ():
        for port in device.get("ports") or ():
            for gid in port.get("gids") or ():
                gid.pop("gid", None)
    for numa in doc.get("numa_nodes") or ():
        numa.pop("memory_kib", None)


def group_nodes(nodes: list[NodeFacts] | tuple[NodeFacts, ...]) -> list[list[NodeFacts]]:
    groups: dict[str, list[NodeFacts]] = {}
    for node in nodes:
        groups.setdefault(fleet_key(node), []).append(node)
    return list(groups.values())


T = TypeVar("T")


def _merge(
    items: Iterable[tuple[T, Iterable[str]]],
    key_of: Callable[[T], Hashable],
    with_nodes: Callable[[T, tuple[str, ...]], T],
) -> list[T]:
    merged: dict[Hashable, tuple[T, dict[str, None]]] = {}
    for item, names in items:
        key = key_of(item)
        if key not in merged:
            merged[key] = (item, {})
        merged[key][1].update(dict.fromkeys(names))  # an ordered set: linear in fleet size
    return [with_nodes(item, tuple(names)) for item, names in merged.values()]


def evaluate_fleet(
    image: ImageFacts,
    nodes: list[NodeFacts] | tuple[NodeFacts, ...],
    matrix: Matrix,
    evaluator: Callable[..., Evaluation] | None = None,
    compare_nodes: bool = False,
    jobs: Iterable[JobFacts] = (),
) -> FleetResult:
    """jobs: the launch spec's containers running this image (imgcheck.job.JobFacts); each is checked on each node."""
    found: list[tuple[Finding, list[str]]] = []
    unknown: list[tuple[Unknown, list[str]]] = []
    groups = group_nodes(nodes)
    for group in groups:
        for job in tuple(jobs) or (None,):
            run = evaluator or evaluate  # looked up at call time (tests count calls)
            result = run(image, group[0], matrix) if job is None else run(image, group[0], matrix, job=job)
            names = [n.name for n in group]
            found += [(f, names) for f in result.findings]
            unknown += [(u, names) for u in result.unknowns]
    if compare_nodes:  # `node check`: the nodes as one job's nodes, against each other
        found += [(f, list(f.nodes)) for f in fleet_compare.compare(nodes, matrix)]
    # The same finding on several groups (e.g. an Env trap) is one finding naming all its nodes.
    findings = _merge(
        found, lambda f: dataclasses.replace(f, nodes=()), lambda f, names: dataclasses.replace(f, nodes=names)
    )
    unknowns = _merge(
        unknown, lambda u: dataclasses.replace(u, nodes=()), lambda u, names: dataclasses.replace(u, nodes=names)
    )
    findings.sort(key=lambda f: (*finding_rank(f), f.id, f.title))
    unknowns.sort(key=lambda u: u.rule)
    return FleetResult(tuple(findings), tuple(unknowns), len(groups))


def parse_ignore(spec: str, reason: str) -> Suppression:
    rule, _, node = spec.partition("@")
    if not rule.strip():
        raise BadInputError(f"--ignore {spec!r}: expected RULE or RULE@NODE")
    return Suppression(rule=rule.strip(), node=node.strip() or None, reason=reason)


def apply_suppressions(
    findings: tuple[Finding, ...], unknowns: tuple[Unknown, ...], suppressions: tuple[Suppression, ...]
) -> tuple[tuple[Finding, ...], tuple[Unknown, ...]]:
    def keep(rule: str, nodes: tuple[str, ...]) -> tuple[str, ...] | None:
        remaining = nodes
        for s in suppressions:
            if s.rule != rule:
                continue
            if s.node is None:
                return None
            remaining = tuple(n for n in remaining if n != s.node)
        return remaining if remaining or not nodes else None

    out_f = []
    for f in findings:
        nodes = keep(f.id, f.nodes)
        if nodes is not None:
            out_f.append(dataclasses.replace(f, nodes=nodes))
    out_u = []
    for u in unknowns:
        nodes = keep(u.rule, u.nodes)
        if nodes is not None:
            out_u.append(dataclasses.replace(u, nodes=nodes))
    return tuple(out_f), tuple(out_u)


def check_names(nodes: list[NodeFacts]) -> list[NodeFacts]:
    """Drop exact duplicates (the same file given twice); two different nodes with one name are an error."""
    by_name: dict[str, NodeFacts] = {}
    for node in nodes:
        if node.name in by_name:
            if by_name[node.name] != node:
                raise BadInputError(f"two different node facts are both named {node.name!r}")
            continue
        by_name[node.name] = node
    return list(by_name.values())


def build_report(
    image: ImageFacts,
    nodes: list[NodeFacts] | tuple[NodeFacts, ...],
    matrix: Matrix,
    suppressions: tuple[Suppression, ...] = (),
    generated_at: str | None = None,
    evaluator: Callable[..., Evaluation] | None = None,
    compare_nodes: bool = False,
    jobs: Iterable[JobFacts] = (),
) -> Report:
    nodes = check_names(list(nodes))
    result = evaluate_fleet(image, nodes, matrix, evaluator, compare_nodes, jobs)
    findings, unknowns = apply_suppressions(result.findings, result.unknowns, tuple(suppressions))
    return Report(
        image=image,
        nodes=tuple(nodes),
        findings=findings,
        unknowns=unknowns,
        verdict=verdict_of(findings),
        outcome=outcome_of(findings, unknowns),
        matrix=matrix.info(),
        tool_version=__version__,
        generated_at=generated_at or datetime.now(UTC).replace(microsecond=0).isoformat(),
        suppressed=tuple(suppressions),
    )
