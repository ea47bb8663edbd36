"""The result of a check: findings per rule, recommendations and a verdict."""

from __future__ import annotations

from dataclasses import dataclass, field

from .image import ImageFacts
from .location import Location
from .node import NodeFacts

# 2: recommendation kinds env and pip-pin; 3: evidence says where each fact came from ("origin" when it is
# not a file: a node facts file, a Kubernetes label, an image config field) and names the member of a keyed
# collection it is about ("collection", "item"); nodes carry "sources" (fact -> location)
# 4: "outcome" ok|warn|incomplete|fail (the headline: "incomplete" when a rule that could give an error is
# undecided and no error was found); unknowns carry "facts" (what decides them) and "severity" (the worst the
# rule can give); "verdict" keeps its three values
# 5: conditional findings: a finding with "assumes" (the presence of a component the facts do not show, e.g. "the
# image ships NCCL") holds only under that hypothesis: it never makes the verdict "fail"/"warn" nor exit 1, and
# ranks below every unconditional finding; unknowns carry "gated_by" (the presence facts that decide whether the
# rule applies at all) and the report "questions" (each deciding question once, with the rules it decides)
REPORT_SCHEMA_VERSION = 5

SEVERITIES = ("error", "warning", "info")  # worst first: the one severity order of every format and gate
FAIL_ON_UNKNOWN = "unknown"  # --fail-on unknown: errors, and checks that could give one but were not decided
SEVERITY_RANK = {severity: rank for rank, severity in enumerate(SEVERITIES)}  # error 0, warning 1, info 2
CONFIDENCES = ("verified", "reported", "vendor-guidance", "hypothesis")
EvidenceValue = str | int | float | bool | None  # what a fact's value may be in the JSON report


@dataclass(frozen=True)
class Evidence:
    fact: str  # e.g. "image.rdma.libibverbs.private_abi" or "node.gpu.kernel_module"
    value: EvidenceValue
    location: Location | None = None  # where the fact was read (None: derived, or nowhere known)
    # A fact about one member of a keyed collection (provider mlx5 of image.rdma.providers): readers such as
    # verify take the member from here rather than parsing `fact`
    collection: str | None = None
    item: str | None = None

    def __post_init__(self) -> None:
        if self.location is not None and not isinstance(self.location, Location):
            raise TypeError(f"Evidence {self.fact}: location must be a Location, got {self.location!r}")

    @classmethod
    def member(
        cls, collection: str, item: str, field: str, value: EvidenceValue, location: Location | None = None
    ) -> Evidence:
        return cls(f"{collection}.{item}.{field}", value, location, collection=collection, item=item)

    @property
    def path(self) -> str | None:
        return self.location.path if self.location else None

    @property
    def layer(self) -> str | None:
        return self.location.layer if self.location else None

    @property
    def origin(self) -> str | None:
        return self.location.origin if self.location else None

    def to_json(self) -> dict[str, EvidenceValue]:
        """path and layer always (the schema 2 keys); origin, collection and item where set."""
        doc: dict[str, EvidenceValue] = {"fact": self.fact, "value": self.value, "path": self.path, "layer": self.layer}
        for key in ("origin", "collection", "item"):
            if getattr(self, key) is not None:
                doc[key] = getattr(self, key)
        return doc


def node_evidence(node: NodeFacts | None, fact: str, value: EvidenceValue) -> Evidence:
    """Evidence of node fact `fact` (below node.), located where the node's reader read it: a probed file, a
    node facts file, a Kubernetes label (NodeFacts.location_of). Nothing that cites a node fact names a path."""
    return Evidence(f"node.{fact}", value, node.location_of(fact) if node is not None else None)


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
    # schema 4: trigger conditions the facts do not show to hold (a known issue matched on its version range
    # alone); such a finding ranks below one of the same severity whose conditions were shown (finding_rank)
    unshown: tuple[str, ...] = ()
    # schema 5: a conditional finding: what it assumes present that the facts do not show, in words ("the image
    # ships NCCL (not read: ...)"), and those components' fact names; empty: it holds on the facts alone
    assumes: tuple[str, ...] = ()
    assumed_facts: tuple[str, ...] = ()


def finding_rank(finding: Finding) -> tuple[int, int, int]:
    """Sort key, best-founded and worst first: unconditional before conditional (a hypothesis), then severity, then
    shown before version-range-only matches."""
    return 1 if finding.assumes else 0, severity_rank(finding.severity), 1 if finding.unshown else 0


def unconditional(findings: tuple[Finding, ...] | list[Finding]) -> list[Finding]:
    """The findings that hold on the facts alone: only they make a verdict or an exit code."""
    return [f for f in findings if not f.assumes]


@dataclass(frozen=True)
class Unknown:
    """A rule that could not be decided because a fact it needs is missing."""

    rule: str
    reason: str
    nodes: tuple[str, ...] = ()
    # schema 4: the facts whose answer decides it (engine/facts.py names), and the worst severity the rule can
    # give (from its matrix row): an undecided rule that could give an error makes the outcome "incomplete"
    facts: tuple[str, ...] = ()
    severity: str | None = None
    questions: tuple[str, ...] = ()  # schema 4: what a user answers to decide it, one per fact (grouped on screen)
    # schema 5: the components whose presence is unknown and decides whether the rule applies (image.nccl, ...):
    # a presence gate, asked once per component on screen (question_groups) rather than once per rule
    gated_by: tuple[str, ...] = ()


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
class QuestionGroup:
    """One question a user can answer, with every undecided rule it decides."""

    question: str
    rules: tuple[str, ...]
    error_rules: tuple[str, ...]  # those that could give an error
    presence: bool  # a presence gate (does the image ship X?): the rules' unknowns are gated by it


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
    outcome: str = ""  # appended (schema 4): ok | warn | incomplete | fail, never greener than the facts
    # appended (schema 5): each question that decides undecided rules, once, most error-capable rules first
    questions: tuple[QuestionGroup, ...] = ()

    def __post_init__(self) -> None:
        if not self.outcome:  # derived from findings and unknowns unless given (a stored report's own)
            object.__setattr__(self, "outcome", outcome_of(self.findings, self.unknowns))
        if not self.questions and self.unknowns:
            object.__setattr__(self, "questions", tuple(question_groups(self.unknowns)))


def severity_rank(severity: str) -> int:
    """Sort key, worst first; a severity imgcheck does not know sorts last (reports read from storage)."""
    return SEVERITY_RANK.get(severity, len(SEVERITIES))


def at_or_above(severity: str, threshold: str) -> bool:
    """Does a finding of `severity` reach `threshold` (a --fail-on value; "never" is never reached; "unknown"
    fails on errors and, besides, on an incomplete outcome: cli exit_code)?"""
    if threshold == FAIL_ON_UNKNOWN:
        threshold = "error"
    return threshold in SEVERITY_RANK and severity_rank(severity) <= SEVERITY_RANK[threshold]


OUTCOMES = ("fail", "incomplete", "warn", "ok")  # worst first
NOT_DECIDED = "not decided: "  # how the engine starts the reason of a rule it settled as unknown


def undecided_errors(unknowns: tuple[Unknown, ...] | list[Unknown]) -> list[Unknown]:
    """The unknowns that could have been errors: they keep a report from saying "no problems found"."""
    return [u for u in unknowns if u.severity == "error"]


def deciding_questions(unknowns: tuple[Unknown, ...] | list[Unknown]) -> list[tuple[str, tuple[str, ...]]]:
    """(question, rules it decides) for the undecided rules that could give an error, most rules first: what a
    user answers (a node fact, a launch setting) to turn an incomplete check into a verdict."""
    by_question: dict[str, dict[str, None]] = {}
    for u in undecided_errors(unknowns):
        for question in u.questions or (u.reason.removeprefix(NOT_DECIDED),):
            by_question.setdefault(question, {})[u.rule] = None
    return sorted(((q, tuple(r)) for q, r in by_question.items()), key=lambda qr: (-len(qr[1]), qr[0]))


def question_groups(unknowns: tuple[Unknown, ...] | list[Unknown]) -> list[QuestionGroup]:
    """Every deciding question once, ranked by how many error-capable rules it could decide, then by all rules."""
    rules: dict[str, dict[str, None]] = {}
    errors: dict[str, dict[str, None]] = {}
    presence: set[str] = set()
    for u in unknowns:
        for i, question in enumerate(u.questions or (u.reason.removeprefix(NOT_DECIDED),)):
            rules.setdefault(question, {})[u.rule] = None
            if u.severity == "error":
                errors.setdefault(question, {})[u.rule] = None
            if u.gated_by and i < len(u.gated_by):
                presence.add(question)
    groups = [QuestionGroup(q, tuple(r), tuple(errors.get(q, {})), q in presence) for q, r in rules.items()]
    return sorted(groups, key=lambda g: (-len(g.error_rules), -len(g.rules), g.question))


def outcome_of(findings: tuple[Finding, ...] | list[Finding], unknowns: tuple[Unknown, ...] | list[Unknown]) -> str:
    """The verdict, made no greener than the facts: without an error finding, an undecided rule that could give
    an error makes it "incomplete"."""
    verdict = verdict_of(findings)
    return "incomplete" if verdict != "fail" and undecided_errors(unknowns) else verdict


def verdict_of(findings: tuple[Finding, ...] | list[Finding]) -> str:
    severities = {f.severity for f in unconditional(findings)}
    if "error" in severities:
        return "fail"
    if "warning" in severities:
        return "warn"
    return "ok"


def report_outcome(report: Report) -> str:
    """The report's headline, from its findings and unknowns (a report built by hand or read from storage
    before schema 4 may not carry `outcome`)."""
    return outcome_of(report.findings, report.unknowns)
