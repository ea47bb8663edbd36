"""The result of a check: findings per rule, recommendations and a verdict."""

from __future__ import annotations

from dataclasses import dataclass, field

from .image import ImageFacts
from .node import NodeFacts

REPORT_SCHEMA_VERSION = 2  # 2: recommendation kinds env and pip-pin

SEVERITIES = ("error", "warning", "info")  # worst first: the one severity order of every format and gate
SEVERITY_RANK = {severity: rank for rank, severity in enumerate(SEVERITIES)}  # error 0, warning 1, info 2
CONFIDENCES = ("verified", "reported", "vendor-guidance", "hypothesis")


@dataclass(frozen=True)
class Evidence:
    fact: str  # e.g. "image.rdma.libibverbs.private_abi" or "node.gpu.kernel_module"
    value: str | int | float | bool | None
    path: str | None = None
    layer: str | None = None


@dataclass(frozen=True)
class Finding:
    id: str  # stable rule id, e.g. RDMA-PABI-MISMATCH
    severity: str  # error | warning | info
    title: str
    predicted_error: str | None
    mechanism: str
    confidence: str  # verified | reported | vendor-guidance | hypothesis
    evidence: tuple[Evidence, ...] = ()
    fixes: tuple[str, ...] = ()
    nodes: tuple[str, ...] = ()
    sources: tuple[str, ...] = ()


@dataclass(frozen=True)
class Unknown:
    """A rule that could not be decided because a fact it needs is missing."""

    rule: str
    reason: str
    nodes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Recommendation:
    image: str
    why: str
    differences: tuple[str, ...] = ()
    kind: str = "image"  # image | node-upgrade | env | pip-pin (the last two keep the image; REPORT_SCHEMA_VERSION 2)

    def label(self) -> str:
        """How formats name the kind: 'env change: IMAGE', 'pip pin: IMAGE', 'node upgrade: ...'."""
        return RECOMMENDATION_LABELS.get(self.kind, "image")


RECOMMENDATION_LABELS = {"image": "image", "node-upgrade": "node upgrade", "env": "env change", "pip-pin": "pip pin"}


@dataclass(frozen=True)
class Suppression:
    """A finding the user chose to ignore (`--ignore RULE[@node] --reason ...`), kept visible in the report."""

    rule: str
    node: str | None = None  # None: on every node
    reason: str = ""
    expires: str | None = None  # YYYY-MM-DD from an ignore file: applies through that day
    origin: str | None = None  # the ignore file it came from; None: the command line


@dataclass(frozen=True)
class MatrixInfo:
    version: str | None = None
    digest: str | None = None


@dataclass(frozen=True)
class Report:
    image: ImageFacts
    nodes: tuple[NodeFacts, ...] = ()
    findings: tuple[Finding, ...] = ()
    unknowns: tuple[Unknown, ...] = ()
    recommendations: tuple[Recommendation, ...] = ()
    verdict: str = "ok"  # ok | warn | fail
    matrix: MatrixInfo = field(default_factory=MatrixInfo)
    tool_version: str | None = None
    generated_at: str | None = None
    schema_version: int = REPORT_SCHEMA_VERSION
    suppressed: tuple[Suppression, ...] = ()  # appended: what --ignore removed, and why


def severity_rank(severity) -> int:
    """Sort key, worst first; a severity imgcheck does not know sorts last (reports read from storage)."""
    return SEVERITY_RANK.get(severity, len(SEVERITIES))


def at_or_above(severity, threshold: str) -> bool:
    """Does a finding of `severity` reach `threshold` (a --fail-on value; "never" is never reached)?"""
    return threshold in SEVERITY_RANK and severity_rank(severity) <= SEVERITY_RANK[threshold]


def verdict_of(findings: tuple[Finding, ...] | list[Finding]) -> str:
    severities = {f.severity for f in findings}
    if "error" in severities:
        return "fail"
    if "warning" in severities:
        return "warn"
    return "ok"
