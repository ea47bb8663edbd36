"""How sure a triage answer is, and why: from the evidence behind the first failure and its
leading cause (signature confidence, how the first failure was chosen, whether the cause order
rests on facts or only on the advice order, whether image/node facts were joined)."""

from __future__ import annotations

from .result import (
    CAUSE_SUPPORTED,
    CAUSE_UNCONDITIONAL,
    CAUSE_UNKNOWN,
    VERDICT_ADVISORY,
    VERDICT_FOUND,
    VERDICT_INFO,
    Certainty,
    Diagnosis,
    FirstFailure,
)
from .signatures import Signature

HIGH, MEDIUM, LOW = "high", "medium", "low"
_LEVELS = (LOW, MEDIUM, HIGH)


def assess(
    verdict: str, first: FirstFailure | None, diagnoses: tuple[Diagnosis, ...], sigs: dict[str, Signature], joined: bool
) -> Certainty:
    if verdict != VERDICT_FOUND:
        if verdict == VERDICT_ADVISORY:
            return Certainty(LOW, ("no failing line was located; only warnings matched",))
        if verdict == VERDICT_INFO:
            return Certainty(MEDIUM, ("only informational lines matched; nothing in the log is a known failure",))
        return Certainty(LOW, ("no line matches a known failure signature, so no cause is named",))
    reasons: list[str] = []
    lead = diagnoses[0] if diagnoses else None
    if first is None or lead is None:
        # warnings only (advisory signatures): something to check, not a located failure
        return Certainty(LOW, ("no failing line was located; only warnings matched",))
    sig = sigs[first.signature]
    level = {"verified": HIGH, "vendor-guidance": HIGH, "reported": MEDIUM, "hypothesis": LOW}[sig.confidence]
    reasons.append(f"the first failure matches {sig.id}, whose meaning is {sig.confidence}")
    if sig.role == "advisory":
        reasons.append("no error line was printed: the first failure is a warning the job does not survive unharmed")
    if sig.role == "secondary":
        level = _down(level)
        reasons.append(
            "that line reports a consequence (timeout or lost peer): the real failure may be on a rank whose "
            "log is missing"
        )
    if "not all failing lines carry timestamps" in first.basis:
        level = _down(level)
        reasons.append("not every failing line has a timestamp, so the first failure is chosen by role and input order")
    top = lead.causes[0] if lead.causes else None
    if top is not None:
        if top.status == CAUSE_SUPPORTED:
            reasons.append(
                f"the leading cause '{top.id}' is supported by the evidence: " + "; ".join(top.because)[:300]
            )
        elif top.status in (CAUSE_UNCONDITIONAL, CAUSE_UNKNOWN):
            if len(lead.causes) > 1:
                level = _down(level) if level == HIGH else level
                reasons.append(
                    f"the leading cause '{top.id}' is first by the advice order, not by facts"
                    + ("" if joined else "; --image/--node would let facts reorder the causes")
                )
            else:
                reasons.append(f"'{top.id}' is the only cause recorded for this signature")
    return Certainty(level, tuple(reasons))


def _down(level: str) -> str:
    return _LEVELS[max(0, _LEVELS.index(level) - 1)]
