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

Settings work the same way. A variable the launch spec (given, its env all shown) does not set while the image's
Env is not read is State.UNSET_BY_LAUNCH: its value is the library's default unless the image sets it. A rule
undecided on it is evaluated under "the image sets none of them" (facts.image_sets_none) and its finding is
conditional on that ("the image does not set NCCL_SOCKET_IFNAME ..."); with the image's Env read and not setting
it the fact is ABSENT and the rule decides outright. A finding a rule gives while a setting it declares is
UNSET_BY_LAUNCH or UNKNOWN (it read "unset" where it could not know) is made conditional the same way
(_unset_conditional), so no finding claims a default the facts do not show. A variable the image's reference says
its NVIDIA family sets (nvidia/cuda, an NGC image: knowledge/image_env.py) is neither: it is set, inferred, and the
hypothesis keeps it set.
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
    return tuple(f for f in facts.PRESENCE if f.state(ctx) is State.UNKNOWN and (not f.rare or _hinted(ctx, f)))


def _hinted(ctx: Ctx, fact: Fact) -> list[str]:
    """The settings the job sets whose names show it means to use `fact`'s component (its hints)."""
    seen = {*ctx.image.env, *ctx.image.nccl_conf, *(v.name for v in (ctx.job.env if ctx.job is not None else ()))}
    return sorted(n for n in seen if fact.hints and n.startswith(fact.hints) and ctx.setting(n) is not None)


def assumption_words(ctx: Ctx, fact: Fact) -> str:
    """'the image ships NCCL (not read: <why>; the launch sets NCCL_SOCKET_IFNAME, so the job uses NCCL)'."""
    why = fact.why(ctx) or "not read"
    hints = _hinted(ctx, fact)
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


def _hypothesis(
    image: ImageFacts,
    node: NodeFacts,
    job: JobFacts | None,
    assumed: tuple[Fact, ...],
    unset: bool,
    family: dict[str, str],
) -> facts.Facts:
    for fact in assumed:
        assert fact.present is not None
        image, node, job = fact.present(image, node, job)
    if not unset:
        return image, node, job
    # "the image sets none of them" beyond what is known of its Env, and what its reference's NVIDIA family sets
    # (knowledge/image_env.py) is known of it: an image FROM nvidia/cuda keeps NVIDIA_VISIBLE_DEVICES=all
    image = dataclasses.replace(image, env={**family, **image.env})
    return facts.image_sets_none(image, node, job)


def unset_settings(ctx: Ctx, reads: tuple[Fact, ...]) -> tuple[Fact, ...]:
    """The setting facts a rule reads that the launch leaves unset while the image's Env is not read, and that an
    image is not usually known to set (facts.SET_BY_GPU_BASE_IMAGES: every nvidia/cuda image sets those)."""
    return tuple(
        f
        for f in reads
        if f.unset_names
        and not set(f.unset_names) <= set(facts.SET_BY_GPU_BASE_IMAGES)
        and f.state(ctx) is State.UNSET_BY_LAUNCH
    )


def unset_words(ctx: Ctx, settings: tuple[Fact, ...]) -> str:
    """'the image does not set NCCL_SOCKET_IFNAME (its Env is not read: <why>; <launch> does not set it either),
    so the library's default applies'."""
    names = list(dict.fromkeys(n for f in settings for n in f.unset_names))
    shown = ", ".join(names[:-1]) + f" or {names[-1]}" if len(names) > 1 else names[0]
    job = ctx.job
    launch = f"; {job.where} does not set {'them' if len(names) > 1 else 'it'} either" if job is not None else ""
    unread = ctx.image.unknown_reason("env") or "not read"
    return f"the image does not set {shown} (its Env is not read: {unread}{launch}), so " + (
        "their defaults apply" if len(names) > 1 else "its default applies"
    )


def _words_of(ctx: Ctx, assumed: tuple[Fact, ...], words: dict[str, str]) -> tuple[str, ...]:
    """The words of each assumption: one per component, one for all the settings assumed unset."""
    settings = tuple(f for f in assumed if f.unset_names)
    out = [words[f.name] for f in assumed if not f.unset_names]
    return (*out, unset_words(ctx, settings)) if settings else tuple(out)


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
    family = {name: var.value for name, var in ctx.family_env.items()}
    components = unknown_components(ctx)
    reads = _rule_reads(families)
    findings = [_unset_conditional(ctx, f, reads.get(f.id, ())) for f in findings]
    unset = {rule: unset_settings(ctx, facts_read) for rule, facts_read in reads.items()} if job is not None else {}
    if not unknowns or not (components or any(unset.values())):
        return findings, unknowns
    decided = {f.id for f in findings}

    def assumed_for(rule: str) -> tuple[Fact, ...]:
        # only what the rule declares it reads, so a finding never rests on a component it does not name;
        # a rule that declares none of them is evaluated with all assumed (and names them all); then the settings
        # the launch leaves unset and the image may set (UNSET_BY_LAUNCH): "the image does not set them"
        settings = unset.get(rule, ())
        # by name: a family may narrow a component's state (node_only's VERBS_WORKLOAD is libibverbs, or any program
        # in a node check) and still declares that component
        names = {f.name for f in reads.get(rule, ())}
        declared = tuple(f for f in components if f.name in names)
        fallback = tuple(f for f in components if not f.declared_only)
        return (declared or (() if settings else fallback)) + settings

    def key(assumed: tuple[Fact, ...]) -> tuple[tuple[Fact, ...], bool]:
        # the settings hypothesis is one change whatever names it covers (the image's Env read, setting nothing)
        return tuple(f for f in assumed if not f.unset_names), any(f.unset_names for f in assumed)

    # one evaluation per distinct set of assumed components (a handful: subsets of the unknown components)
    outcomes: dict[tuple[tuple[Fact, ...], bool], tuple[list[Finding], list[Unknown]]] = {}
    for u in unknowns:
        k = key(assumed_for(u.rule))
        if u.rule not in decided and k not in outcomes and (k[0] or k[1]):
            outcomes[k] = run(*_hypothesis(image, node, job, *k, family))
    words = {f.name: assumption_words(ctx, f) for f in components}
    out_findings = list(findings)
    out_unknowns: list[Unknown] = []
    made: set[str] = set()  # rules given their conditional findings (a rule may have several unknowns)
    for u in unknowns:
        assumed = assumed_for(u.rule)
        if u.rule in decided or key(assumed) not in outcomes:
            out_unknowns.append(u)
            continue
        hyp_findings, hyp_unknowns = outcomes[key(assumed)]
        found = [f for f in hyp_findings if f.id == u.rule]
        still = [h for h in hyp_unknowns if h.rule == u.rule]
        if found == [] and still and all(h.reason == u.reason for h in still):
            out_unknowns.append(u)  # the hypothesis changes nothing: not a presence gate
            continue
        shown = [f for f in found if f.severity in CONDITIONAL_SEVERITIES]
        # the rule decided on the vague component as it would on a real one (the contract tests hold it to that):
        # a fact it needs and lacks makes it ask under the hypothesis too, so no finding rests on an unknown fact
        conditional_found = bool(shown)
        assumption = _words_of(ctx, assumed, words)
        if conditional_found and u.rule not in made:
            made.add(u.rule)
            if not key(assumed)[1]:
                # settings not covered by the hypothesis (no launch to say them unset): what the finding still
                # assumes of them is said, as for a finding of the real run
                shown = [_unset_conditional(ctx, f, reads.get(f.id, ())) for f in shown]
            out_findings += [_conditional_finding(f, assumed, assumption) for f in shown]
        out_unknowns.append(_gated(u, assumed, still, assumption, conditional_found))
    return out_findings, out_unknowns


def _unset_conditional(ctx: Ctx, found: Finding, facts_read: tuple[Fact, ...]) -> Finding:
    """A finding a rule gave while a setting it reads was not known to be set or unset (the image's Env not read):
    it rests on the setting being unset (ctx.setting gave nothing), so it holds only if the image does not set it."""
    settings = tuple(f for f in facts_read if f.unset_names and f.state(ctx) in (State.UNSET_BY_LAUNCH, State.UNKNOWN))
    if not settings or found.severity not in CONDITIONAL_SEVERITIES:
        return found
    words = unset_words(ctx, settings)
    return dataclasses.replace(
        found,
        mechanism=f"If {words}: {found.mechanism}",
        assumes=(*found.assumes, words),
        assumed_facts=(*found.assumed_facts, *(f.name for f in settings)),
    )


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


def _conditional_finding(found: Finding, assumed: tuple[Fact, ...], words: tuple[str, ...]) -> Finding:
    # a finding already conditional under the hypothesis (a version range its rule assumes) keeps that too
    return dataclasses.replace(
        found,
        mechanism=f"If {'; '.join(words)}: {found.mechanism}",
        assumes=(*words, *found.assumes),
        assumed_facts=tuple(dict.fromkeys((*(f.name for f in assumed), *found.assumed_facts))),
    )


def _gated(u: Unknown, assumed: tuple[Fact, ...], still: list[Unknown], words: tuple[str, ...], found: bool) -> Unknown:
    """The rule's unknown asking the presence question first, then what the hypothesis still asks."""
    questions = list(dict.fromkeys(f.question for f in assumed))
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
    presence = "; ".join(words)
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
