"""Turning a rule's matrix row (text, severity, confidence, sources) plus facts into a Finding."""

from __future__ import annotations

import dataclasses
import string
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, overload

from ..matrix import Matrix
from ..matrix.refs import ref_maps
from ..model.report import Evidence, Finding, Unknown


@dataclass(frozen=True)
class Decided:
    """A rule decided "no problem" although a fact it reads is not fully known (engine/contract.py): the
    engine then reports nothing for it. Never reaches a report."""

    rule: str
    why: str


Outcome = Finding | Unknown | Decided  # what a rule yields


class _Params(dict[str, Any]):
    def __missing__(self, key: str) -> str:  # a template naming a fact this case lacks: say so, don't crash
        return f"<{key}?>"


_REFS: dict[str, dict[str, dict[Any, Any]]] = {}


def _matrix_values(matrix: Matrix) -> dict[str, dict[Any, Any]]:
    """The {nccl_min[...]}-style maps rule texts may use, once per matrix (matrix/refs.py)."""
    if matrix.digest not in _REFS:
        _REFS[matrix.digest] = ref_maps(matrix.tables)
    return _REFS[matrix.digest]


@overload
def _fill(text: str, params: dict[str, Any]) -> str: ...
@overload
def _fill(text: None, params: dict[str, Any]) -> None: ...
def _fill(text: str | None, params: dict[str, Any]) -> str | None:
    if text is None:
        return None
    # a fact a rule passes as None is unknown: say so rather than print Python's "None"
    known = {k: ("unknown" if v is None else v) for k, v in params.items()}
    return string.Formatter().vformat(text, (), _Params(known))


def finding(
    matrix: Matrix, rule_id: str, evidence: Iterable[Evidence], variant: str | None = None, **params: Any
) -> Finding:
    params = {**_matrix_values(matrix), **params}
    row = dict(matrix.rule(rule_id))
    if variant is not None:
        row.update(row.get("variants", {})[variant])
    return Finding(
        id=rule_id,
        severity=row["severity"],
        title=_fill(row["title"], params),
        predicted_error=_fill(row.get("predicted_error"), params),
        mechanism=_fill(row["mechanism"], params),
        confidence=row["confidence"],
        evidence=tuple(evidence),
        fixes=tuple(f for f in (_fill(x, params) for x in row.get("fixes", ())) if f),
        sources=tuple(row.get("sources", ())),
    )


def assuming(found: Finding, words: str | None, fact: str) -> Finding:
    """The finding, conditional on `words` (a version range its mechanism holds for, from the matrix) when the
    fact that would decide it is not known: it is reported as conditional, never counted in the verdict."""
    if words is None:
        return found
    return dataclasses.replace(
        found,
        mechanism=f"If {words}: {found.mechanism}",
        assumes=(*found.assumes, words),
        assumed_facts=(*found.assumed_facts, fact),
    )


# facts no input shows (what the job's program does): a finding that needs one is always conditional on it, so an
# unknown naming one can never turn into a blocking finding (recommend does not count it as undecided)
NEVER_SHOWN_FACTS = frozenset({"job.workload", "job.mpi_thread_level"})


def unknown(rule_id: str, reason: str, facts: tuple[str, ...] = ()) -> Unknown:
    """facts: the fact names (engine/facts.py) whose answer would decide the rule."""
    return Unknown(rule=rule_id, reason=reason, facts=facts)


def decided(rule_id: str, why: str) -> Decided:
    return Decided(rule_id, why)
