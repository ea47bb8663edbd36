"""Decide on the facts there are: rules undecided only because a component's presence is unknown.

A rule about NCCL (or libibverbs, UCX, CUDA) whose image fact is UNKNOWN (not read, not ABSENT) cannot say more than
"not decided: does the image ship NCCL". Yet its other facts (the node's interfaces, the launch's devices) often
decide the mechanism. So the engine evaluates each such rule once more under the hypothesis "the components of
unknown presence that the rule declares it reads are present, details unknown" (facts.Fact.present, the vague state
the contract tests exercise), one run per distinct set of assumed components, and, per undecided rule:

- the hypothesis gives a warning or error finding (a rule that needs a fact it lacks asks instead, under the
  hypothesis as on real facts: tests/test_conditional_findings.py): the finding is reported *conditionally*
  (Finding.assumes names the components assumed and why they were not read), ranked below every unconditional
  finding and never counted in the verdict or exit code;
- in every case the rule's unknown asks the presence question first (Unknown.gated_by), then any further question
  the hypothesis still asks (the one that decides the mechanism), so a report asks each question once.

A component known ABSENT is never hypothesised: absent stays absent.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import TYPE_CHECKING

from ..model.report import NOT_DECIDED, Finding, Unknown
from . import facts
from .context import NCCL_VERSION_UNKNOWN, Ctx
from .contract import reads_of
from .facts import Fact, State

if TYPE_CHECKING:
    from types import ModuleType

    from ..job.model import JobFacts
    from ..matrix import Matrix
    from ..model.image import ImageFacts
    from ..model.node import NodeFacts

Run = Callable[["ImageFacts", "NodeFacts", "JobFacts | None"], tuple[list[Finding], list[Unknown]]]
CONDITIONAL_SEVERITIES = ("error", "warning")


def unknown_components(ctx: Ctx) -> tuple[Fact, ...]:
    return tuple(f for f in facts.PRESENCE if f.state(ctx) is State.UNKNOWN)


def assumption_words(ctx: Ctx, fact: Fact) -> str:
    """'the image ships NCCL (not read: <why>; the launch sets NCCL_SOCKET_IFNAME, so the job uses NCCL)'."""
    why = fact.why(ctx) or "not read"
    seen = {*ctx.image.env, *ctx.image.nccl_conf, *(v.name for v in (ctx.job.env if ctx.job is not None else ()))}
    hints = sorted(n for n in seen if fact.hints and n.startswith(fact.hints) and ctx.setting(n) is not None)
    uses = ""
    if hints:
        shown = ", ".join(hints[:3]) + (f" and {len(hints) - 3} more" if len(hints) > 3 else "")
        # a launch setting shows the job means to use it; it is evidence, not a fact about the image
        uses = f"; the job sets {shown}, so it means to use it: evidence of use, not of what the image holds"
    return f"{fact.assume} (not read: {why}{uses})"


def _rule_reads(families: tuple[ModuleType, ...]) -> dict[str, tuple[Fact, ...]]:
    out: dict[str, tuple[Fact, ...]] = {}
    for family in families:
        out.update(reads_of(family))
    return out


def _hypothesis(image: ImageFacts, node: NodeFacts, job: JobFacts | None, assumed: tuple[Fact, ...]) -> facts.Facts:
    for fact in assumed:
        assert fact.present is not None
        image, node, job = fact.present(image, node, job)
    return image, node, job


def conditional(
    image: ImageFacts,
    node: NodeFacts,
    job: JobFacts | None,
    matrix: Matrix,
    families: tuple[ModuleType, ...],
    findings: list[Finding],
    unknowns: list[Unknown],
    run: Run,
) -> tuple[list[Finding], list[Unknown]]:
    """The findings and unknowns of one evaluation with the presence hypothesis applied (see the module doc)."""
    ctx = Ctx(image, node, matrix, job)
    components = unknown_components(ctx)
    if not components or not unknowns:
        return findings, unknowns
    reads = _rule_reads(families)
    decided = {f.id for f in findings}

    def assumed_for(rule: str) -> tuple[Fact, ...]:
        # only what the rule declares it reads, so a finding never rests on a component it does not name;
        # a rule that declares none of them is evaluated with all assumed (and names them all)
        return tuple(f for f in components if f in reads.get(rule, ())) or components

    # one evaluation per distinct set of assumed components (a handful: subsets of the unknown components)
    outcomes: dict[tuple[Fact, ...], tuple[list[Finding], list[Unknown]]] = {}
    for u in unknowns:
        key = assumed_for(u.rule)
        if u.rule not in decided and key not in outcomes:
            outcomes[key] = run(*_hypothesis(image, node, job, key))
    words = {f.name: assumption_words(ctx, f) for f in components}
    out_findings = list(findings)
    out_unknowns: list[Unknown] = []
    made: set[str] = set()  # rules given their conditional findings (a rule may have several unknowns)
    for u in unknowns:
        if u.rule in decided:
            out_unknowns.append(u)
            continue
        assumed = assumed_for(u.rule)
        hyp_findings, hyp_unknowns = outcomes[assumed]
        found = [f for f in hyp_findings if f.id == u.rule]
        still = [h for h in hyp_unknowns if h.rule == u.rule]
        if found == [] and still and all(h.reason == u.reason for h in still):
            out_unknowns.append(u)  # the hypothesis changes nothing: not a presence gate
            continue
        shown = [f for f in found if f.severity in CONDITIONAL_SEVERITIES]
        # the rule decided on the vague component as it would on a real one (the contract tests hold it to that):
        # a fact it needs and lacks makes it ask under the hypothesis too, so no finding rests on an unknown fact
        conditional_found = bool(shown)
        if conditional_found and u.rule not in made:
            made.add(u.rule)
            out_findings += [_conditional_finding(f, assumed, words) for f in shown]
        out_unknowns.append(_gated(u, assumed, still, words, conditional_found))
    return out_findings, out_unknowns


def _segments(reason: str, all_questions: tuple[str, ...], kept: list[str]) -> str:
    """The parts of an engine-settled reason ("Q1 (details); Q2 (details)") that ask the kept questions; a rule's
    own words (no questions) whole."""
    starts = sorted((reason.find(q), q) for q in all_questions if reason.find(q) >= 0)
    if not starts:
        return reason
    parts = []
    for i, (start, q) in enumerate(starts):
        end = starts[i + 1][0] if i + 1 < len(starts) else len(reason)
        if q in kept:
            parts.append(reason[start:end].rstrip("; "))
    return "; ".join(parts) or reason


def _conditional_finding(found: Finding, assumed: tuple[Fact, ...], words: dict[str, str]) -> Finding:
    condition = "; ".join(words[f.name] for f in assumed)
    return dataclasses.replace(
        found,
        mechanism=f"If {condition}: {found.mechanism}",
        assumes=tuple(words[f.name] for f in assumed),
        assumed_facts=tuple(f.name for f in assumed),
    )


def _gated(u: Unknown, assumed: tuple[Fact, ...], still: list[Unknown], words: dict[str, str], found: bool) -> Unknown:
    """The rule's unknown asking the presence question first, then what the hypothesis still asks."""
    questions = [f.question for f in assumed]
    names = [f.name for f in assumed]
    further: list[str] = []
    for h in still:
        # what the hypothesis still asks beyond the assumed components (their versions are the same question)
        asked = [
            q
            for q in (h.questions or (h.reason.removeprefix(NOT_DECIDED),))
            if q not in questions and not q.startswith(NCCL_VERSION_UNKNOWN)
        ]
        if not asked:
            continue
        questions += [q for q in asked if q not in questions]
        names += [n for n in h.facts if n not in names]
        further.append(_segments(h.reason.removeprefix(NOT_DECIDED), h.questions, asked))
    presence = "; ".join(words[f.name] for f in assumed)
    reason = f"{NOT_DECIDED}whether {presence}"
    if found:
        reason += "; if so, the conditional finding of this rule holds"
    elif further:
        reason += "; if so: " + "; ".join(dict.fromkeys(further))
    elif still:
        reason += "; if so, which version it is decides it"
    else:
        reason += "; if so, the other facts show no problem"
    return dataclasses.replace(
        u,
        reason=reason,
        facts=tuple(dict.fromkeys((*names, *u.facts))),
        questions=tuple(questions),
        gated_by=tuple(f.name for f in assumed),
    )
