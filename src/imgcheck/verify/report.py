"""The result of `imgcheck verify`: run facts, the verifier's document, checks and observations."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass

from ..model.serde import to_dict
from .join import CONTRADICTED, NOT_TESTABLE, Check, Observation
from .result import VerifierOutput

VERIFY_SCHEMA_VERSION = 1


@dataclass(frozen=True)
class RunInfo:
    runtime: str
    exit_code: int | None
    timed_out: bool
    settings: tuple[str, ...] = ()  # isolation applied
    notes: tuple[str, ...] = ()  # isolation the runtime could not apply
    stderr_tail: tuple[str, ...] = ()  # the verifier's last progress lines (where a crash happened)


@dataclass(frozen=True)
class VerifyReport:
    image: str
    run: RunInfo
    verifier: VerifierOutput | None  # None when the verifier produced no document
    static: str  # where predictions came from: "image facts + engine findings", "image facts", "none: ..."
    checks: tuple[Check, ...] = ()
    observations: tuple[Observation, ...] = ()
    verdict: str = "ok"  # ok | contradicted | failed
    schema_version: int = VERIFY_SCHEMA_VERSION


def verdict_of(checks: Iterable[Check], observations: Iterable[Observation], verifier_ran: bool) -> str:
    if not verifier_ran or any(o.severity == "error" for o in observations):
        return "failed"
    if any(c.status == CONTRADICTED for c in checks):
        return "contradicted"
    return "ok"


def exit_code_of(report: VerifyReport) -> int:
    """0 ok; 1 a contradiction or something that fails on this node (the report is still written)."""
    return 0 if report.verdict == "ok" else 1


def render_json(report: VerifyReport) -> str:
    return json.dumps(to_dict(report), indent=2) + "\n"


_MARK = {"confirmed": "ok ", CONTRADICTED: "XX ", NOT_TESTABLE: "-- "}
_SEV = {"error": "ERROR", "warning": "warn ", "info": "info "}


def render_text(report: VerifyReport) -> str:
    """A plain, readable summary (no colour; it is also what goes into files)."""
    lines = [f"imgcheck verify {report.image} (runtime {report.run.runtime}): {report.verdict.upper()}"]
    run = report.run
    state = "timed out" if run.timed_out else f"exit {run.exit_code}"
    lines.append(f"  verifier: {state}; {'; '.join(run.settings)}")
    for note in run.notes:
        lines.append(f"  note: {note}")
    v = report.verifier
    if v is not None:
        lines.append(
            f"  in the container: glibc {v.glibc}, kernel {v.kernel}, libibverbs "
            f"{v.libibverbs.real_path or 'not loaded'}"
        )
    elif run.stderr_tail:
        lines.append(f"  last verifier output: {run.stderr_tail[-1]}")
    lines.append(f"\nPredictions ({report.static}):")
    if not report.checks:
        lines.append("  none")
    for c in report.checks:
        if c.status == "confirmed":  # one line: what was predicted did happen
            lines.append(f"  {_MARK[c.status]}{c.id}: {c.observed}")
            continue
        lines.append(f"  {_MARK.get(c.status, '?? ')}{c.id}: {c.status}")
        lines.append(f"       predicted: {c.prediction}")
        lines.append(f"       observed:  {c.observed}")
        if c.detail:
            lines.append(f"       {c.detail}")
    lines.append("\nObserved on this node:")
    for o in report.observations:
        lines.append(f"  {_SEV.get(o.severity, o.severity)} {o.id}: {o.message}")
    return "\n".join(lines) + "\n"
