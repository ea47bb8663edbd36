"""Which catalog images the engine predicts clean on the nodes, ranked by closeness to the current image."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass

from ..engine import report as engine_report
from ..engine.emit import NEVER_SHOWN_FACTS
from ..engine.evaluate import Evaluation
from ..job.model import JobFacts
from ..matrix import Matrix
from ..model.image import ImageFacts
from ..model.node import NodeFacts
from ..model.report import Unknown
from .base import base_of, repository
from .catalog import CatalogEntry
from .framework import FrameworkWant, distance
from .summary import Summary, major, newer_first_key

BLOCKING = ("error", "warning")
NAMES_SHOWN = 6


def names_text(names: Iterable[str]) -> str:
    """'a, b, c' or 'a, b, c, ... (+997 more)': a fleet's node list stays readable in one line."""
    names = list(names)
    if len(names) <= NAMES_SHOWN:
        return ", ".join(names) or "the nodes"
    return ", ".join(names[:NAMES_SHOWN]) + f", ... (+{len(names) - NAMES_SHOWN} more)"


@dataclass(frozen=True)
class Judgement:
    entry: CatalogEntry
    clean: bool
    blocking: tuple[str, ...] = ()  # "RULE on node1, node2" for findings that rule the candidate out
    unknown_rules: tuple[str, ...] = ()
    why_not: str | None = None


def blocking_rules(
    image: ImageFacts,
    nodes: Sequence[NodeFacts],
    matrix: Matrix,
    ignore: frozenset[str] = frozenset(),
    jobs: tuple[JobFacts, ...] = (),
) -> tuple[set[str], set[str]]:
    """(rules with an error/warning finding, rules left unknown) for the image on the nodes; `ignore`: rules
    the user suppressed everywhere (`--ignore RULE`), which then decide nothing here either. `jobs`: the
    launch-spec containers that run the image: each is checked with it, as `check --job` does."""
    blocking, unknown = set(), set()
    for _node, result in _each(image, nodes, matrix, jobs):
        # a conditional finding (a hypothesis about the image) blocks nothing: its rule stays unknown below
        blocking |= {f.id for f in result.findings if f.severity in BLOCKING and f.id not in ignore and not f.assumes}
        unknown |= {
            u.rule
            for u in result.unknowns
            if u.rule not in ignore and not settings_only(u) and can_block(matrix, u.rule)
        }
    return blocking, unknown


def settings_only(u: Unknown) -> bool:
    """An unknown that says nothing about the candidate image itself: one the engine settled only because the
    image's settings are not known (facts "setting.*": a catalog row never records Env, and the settings checks are
    about what the team adds, which the env-change recommendation answers), one of a rule about a setting it
    requires (a catalog image is judged as if it sets none), or one whose open facts are all the node's (the same
    question for every candidate), or one whose open fact is the image's package list (a catalog row never records it;
    whether the team installs a driver package, IMAGE-DRIVER-USERSPACE, is the same question for every candidate).
    Candidates are judged as if they add no setting; the why says so."""
    if not u.facts:
        return False
    if NEVER_SHOWN_FACTS & set(u.facts):
        return True  # what it would find is conditional on the job's program, never blocking
    if all(f.startswith(("setting.", "node.")) or f == "image.packages" for f in u.facts):
        return True
    return bool(_required_settings().get(u.rule, set()) & set(u.facts))


_REQUIRED_SETTINGS: dict[str, set[str]] | None = None


def _required_settings() -> dict[str, set[str]]:
    """rule -> the setting facts it requires (engine/contract.py), read once."""
    global _REQUIRED_SETTINGS
    if _REQUIRED_SETTINGS is None:
        from ..engine.contract import requires_of
        from ..engine.evaluate import REGISTERED

        _REQUIRED_SETTINGS = {
            rule: {f.name for f in facts if f.name.startswith("setting.")}
            for family in REGISTERED
            for rule, facts in requires_of(family).items()
        }
    return _REQUIRED_SETTINGS


def can_block(matrix: Matrix, rule: str) -> bool:
    """Whether a finding of `rule` could rule a candidate out: an unknown of a rule whose row and variants are all
    below BLOCKING (an info-only rule such as NCCL-RELEASE-LATER-FIX) leaves nothing undecided about the candidate."""
    row = matrix.rule(rule)
    severities = {row["severity"], *(v.get("severity", row["severity"]) for v in row.get("variants", {}).values())}
    return bool(severities & set(BLOCKING))


def _each(
    image: ImageFacts, nodes: Sequence[NodeFacts], matrix: Matrix, jobs: tuple[JobFacts, ...] = ()
) -> Iterator[tuple[NodeFacts, Evaluation]]:
    """(node, engine result) per node (and per launch-spec container, with `jobs`). Callers pass one
    representative per group of identical nodes, so this skips evaluate_fleet's regrouping (hashing every
    node's facts again for each of ~500 catalog readings)."""
    for node in nodes:
        if not jobs:
            yield node, engine_report.evaluate(image, node, matrix)
        for job in jobs:
            yield node, engine_report.evaluate(image, node, matrix, job=job)


def judge(
    entry: CatalogEntry,
    nodes: list[NodeFacts],
    matrix: Matrix,
    must_decide: AbstractSet[str] = frozenset(),
    ignore: frozenset[str] = frozenset(),
    names_of: dict[str, list[str]] | None = None,
    jobs: tuple[JobFacts, ...] = (),
) -> Judgement:
    """Clean = no error/warning finding on any node under every reading of the entry's facts, and none of
    `must_decide` (the rules the current image fails) left unknown: a candidate must be shown to fix them.
    `nodes` may be one representative per group of identical nodes; `names_of` maps each to its group's names."""
    if entry.not_checkable or not entry.readings:
        return Judgement(entry, False, why_not=f"cannot be checked: {entry.not_checkable or 'no facts'}")
    blocking: dict[str, set[str]] = {}
    unknown: set[str] = set()
    for facts in entry.readings:
        for node, result in _each(facts, nodes, matrix, jobs):
            for f in result.findings:
                if f.severity in BLOCKING and f.id not in ignore and not f.assumes:
                    names = names_of.get(node.name, [node.name]) if names_of else [node.name]
                    blocking.setdefault(f.id, set()).update(names)
            unknown |= {
                u.rule
                for u in result.unknowns
                if u.rule not in ignore and not settings_only(u) and can_block(matrix, u.rule)
            }
    if blocking:
        words = tuple(f"{rule} on {names_text(sorted(names))}" for rule, names in sorted(blocking.items()))
        return Judgement(
            entry,
            False,
            blocking=words,
            unknown_rules=tuple(sorted(unknown)),
            why_not="predicted to fail: " + "; ".join(words),
        )
    undecided = sorted(unknown & set(must_decide))
    if undecided:
        return Judgement(
            entry,
            False,
            unknown_rules=tuple(sorted(unknown)),
            why_not=f"cannot be shown to fix {', '.join(undecided)} (undecided for it)",
        )
    return Judgement(entry, True, unknown_rules=tuple(sorted(unknown)))


def rank_key(
    entry: CatalogEntry,
    current: Summary | None,
    unknown_count: int,
    want: FrameworkWant | None = None,
    current_reference: str | None = None,
) -> tuple[object, ...]:
    # current_reference: the current image's base (base.base_of), whose repository ranks first
    """What the user runs first: a tag of the same base image, the same framework; then images the engine
    decides clean before those with a rule it cannot decide (e.g. CUDA 12 on R470 when forward-compat
    libraries are not known); then the framework version asked for (or the --like image's), the same distro
    and Python, the same CUDA major, newest (release, CUDA, NCCL, rdma-core), fewer undecided rules;
    inspected (local) entries before imported and published ones."""
    s = entry.summary
    same_repo = 0 if current_reference and repository(entry.reference) == repository(current_reference) else 1
    same_framework = 0 if current is None or current.framework is None or s.framework == current.framework else 1
    matched = want.matches(s.framework_version) if want is not None else True
    version_rank = 0 if matched else (1 if matched is None else 2)
    near = distance(
        want.version if want and want.version else (current.framework_version if current else None), s.framework_version
    )
    same_distro = 0 if current is None or not current.distro or s.distro == current.distro else 1
    same_python = 0 if current is None or not current.python or s.python == current.python else 1
    same_cuda = 0 if current is None or major(current.cuda) is None or major(s.cuda) == major(current.cuda) else 1
    undecided = 0 if unknown_count == 0 else 1  # an image the engine shows clean before one it cannot decide
    return (
        same_repo,
        same_framework,
        undecided,
        version_rank,
        near,
        same_distro,
        same_python,
        same_cuda,
        newer_first_key(entry.release),
        newer_first_key(s.cuda),
        newer_first_key(s.nccl),
        newer_first_key(s.rdma_core),
        unknown_count,
        {"local": 0, "imported": 1}.get(entry.origin, 2),
        entry.reference,
    )


def is_current(entry: CatalogEntry, current_image: ImageFacts | None) -> bool:
    if current_image is None:
        return False
    if entry.digest and current_image.digest and entry.digest == current_image.digest:
        return True
    return entry.reference == current_image.reference


def clean_candidates(
    entries: list[CatalogEntry],
    nodes: list[NodeFacts],
    matrix: Matrix,
    *,
    current_image: ImageFacts | None = None,
    current: Summary | None = None,
    want: FrameworkWant | None = None,
    must_decide: AbstractSet[str] = frozenset(),
    ignore: frozenset[str] = frozenset(),
    names_of: dict[str, list[str]] | None = None,
    jobs: tuple[JobFacts, ...] = (),
    same_framework_only: bool = False,
) -> tuple[list[Judgement], list[Judgement]]:
    """(clean candidates in rank order, rejected ones). `same_framework_only`: with no `want`, only images
    without a framework (the current image has none: another framework is never proposed unless asked)."""
    clean: list[Judgement] = []
    rejected: list[Judgement] = []
    for entry in entries:
        if is_current(entry, current_image):
            continue
        if want is not None and entry.summary.framework not in (want.name, None):
            continue  # never another framework unless asked (a team's own image with no framework package stays)
        if want is None and same_framework_only and entry.summary.framework is not None:
            continue
        j = judge(entry, nodes, matrix, must_decide, ignore, names_of, jobs)
        (clean if j.clean else rejected).append(j)
    ref = base_of(current_image).reference if current_image is not None else None
    clean.sort(key=lambda j: rank_key(j.entry, current, len(j.unknown_rules), want, ref))
    return clean, rejected
