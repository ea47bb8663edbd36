"""One entry per problem for people and alert systems, however many node groups it appeared on.

The engine evaluates each group of identical nodes once, and a finding's mechanism and evidence name
that group's facts (its kernel, its OFED release), so the same rule with the same title can come back
once per group. People and GitHub code scanning want it once, naming every node; the JSON report keeps
each group's finding as the engine made it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass

from ..model.report import Finding, finding_rank


@dataclass(frozen=True)
class Problem:
    """`finding` with the nodes of all its `variants` (the per-group findings that share its headline)."""

    finding: Finding
    variants: tuple[Finding, ...]


def _headline(f: Finding) -> tuple[str | None, ...]:
    return (f.id, f.severity, f.title, f.predicted_error, f.confidence)


def collapse(findings: Iterable[Finding]) -> list[Problem]:
    groups: dict[tuple[str | None, ...], list[Finding]] = {}
    for f in findings:
        groups.setdefault(_headline(f), []).append(f)
    problems = []
    for variants in groups.values():
        nodes = tuple(dict.fromkeys(n for v in variants for n in v.nodes))  # ordered, linear in fleet size
        evidence = tuple(dict.fromkeys(e for v in variants for e in v.evidence))
        fixes = tuple(dict.fromkeys(x for v in variants for x in v.fixes))
        sources = tuple(dict.fromkeys(s for v in variants for s in v.sources))
        merged = dataclasses.replace(variants[0], nodes=nodes, evidence=evidence, fixes=fixes, sources=sources)
        problems.append(Problem(merged, tuple(variants)))
    problems.sort(key=lambda p: (*finding_rank(p.finding), p.finding.id))
    return problems
