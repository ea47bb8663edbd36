"""The triage result: what failed first, which signatures, cause candidates in order, and the
join with image/node facts. Frozen dataclasses; JSON comes from model.serde.to_dict.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..model.report import Evidence, Finding
from .context import LogContext
from .outcome import STATE_UNKNOWN, RunOutcome

# 2 (issue 35): verdict "advisory_only" (warnings matched, no failing line located; exit 0) split from
# "signature_found", which now always has a located first failure.
# 3 (issue 32, triage side): `outcome` {state completed|progressed|failed_check|ended|unknown, evidence, marker,
# where, text, site}: how far the run got, from its own end-of-run and progress lines; causes carry `kind`
# ("cause" | "read").
TRIAGE_SCHEMA_VERSION = 3

VERDICT_FOUND = "signature_found"  # at least one error/warning signature
VERDICT_ADVISORY = "advisory_only"  # warnings only: something to check, no failure located
VERDICT_INFO = "info_only"  # only informational signatures (e.g. a harmless provider warning)
VERDICT_NONE = "no_known_signature"

CAUSE_SUPPORTED = "supported"  # every condition holds
CAUSE_UNKNOWN = "unknown"  # some condition could not be evaluated
CAUSE_UNLIKELY = "unlikely"  # some condition is false
CAUSE_UNCONDITIONAL = "candidate"  # the cause has no condition


@dataclass(frozen=True)
class Where:
    source: str
    line: int
    text: str
    rank: int | None = None
    host: str | None = None
    pid: int | None = None
    timestamp: str | None = None


@dataclass(frozen=True)
class CauseResult:
    order: int
    id: str
    text: str
    next: str
    confidence: str
    status: str
    because: tuple[str, ...] = ()
    kind: str = "cause"  # "read": advice to read more of the log, ranked after concrete causes


@dataclass(frozen=True)
class Diagnosis:
    signature: str
    title: str
    severity: str
    role: str
    meaning: str
    confidence: str
    sources: tuple[str, ...]
    occurrences: int
    ranks: tuple[int, ...]
    hosts: tuple[str, ...]
    first: Where
    at_first_failure: bool
    causes: tuple[CauseResult, ...]
    note: str | None = None  # e.g. why a signature counts as information for this job


@dataclass(frozen=True)
class Certainty:
    """How sure the answer is and why: every triage result says it."""

    level: str  # high | medium | low
    reasons: tuple[str, ...]


@dataclass(frozen=True)
class FirstFailure:
    stream: str  # "rank 3", "host node12", "file dmesg.log"
    signature: str
    where: Where
    basis: str  # how the first failure was chosen


@dataclass(frozen=True)
class TimelineEntry:
    stream: str
    signature: str
    where: Where


@dataclass(frozen=True)
class InputInfo:
    name: str
    lines: int


@dataclass(frozen=True)
class GeneralOrderStep:
    order: int
    step: str
    next: str


@dataclass(frozen=True)
class JoinNote:
    topic: str
    status: str  # consistent | explains | contradicts | unknown
    text: str
    evidence: tuple[Evidence, ...] = ()


@dataclass(frozen=True)
class JoinResult:
    image: str | None = None
    node: str | None = None
    notes: tuple[JoinNote, ...] = ()
    engine_findings: tuple[Finding, ...] = ()
    engine_note: str | None = None  # why engine findings are absent, when they are


@dataclass(frozen=True)
class TriageReport:
    verdict: str
    first_failure: FirstFailure | None
    diagnoses: tuple[Diagnosis, ...]
    timeline: tuple[TimelineEntry, ...]
    silent_ranks: tuple[int, ...]
    notes: tuple[str, ...]
    context: LogContext
    inputs: tuple[InputInfo, ...]
    general_order: tuple[GeneralOrderStep, ...] = ()
    general_sources: tuple[str, ...] = ()
    join: JoinResult | None = None
    signatures_version: str | None = None
    tool_version: str | None = None
    certainty: Certainty | None = None
    outcome: RunOutcome = RunOutcome(state=STATE_UNKNOWN)
    schema_version: int = TRIAGE_SCHEMA_VERSION
    kind: str = "triage"
