"""The rule contract: a rule declares the facts it reads next to its code; the engine owns unknown.

Two shapes, one contract:

- a rule function decorated with ``@rule(RULE_ID, requires=(facts.NCCL,), reads=(facts.GPU_DRIVER,),
  needs={table: {key}})``, and the family module's ``RULES, NEEDS, REQUIRES, READS, check = family(fn, ...)``;
- an older family module (RULES, NEEDS, check(ctx)) with module-level ``REQUIRES = {RULE_ID: (facts...)}``
  and ``READS = {RULE_ID: (facts...)}`` (READS includes the REQUIRES facts).

`requires`: the components the rule is about; one known ABSENT and the rule does not apply (no NCCL: no NCCL
rule). `reads`: every fact the body reads. The evaluator (``settle``) runs the body and then, for every rule
that yielded nothing and applies, asks the facts the rule reads: if one is unknown, or present with unknown
details, the rule is undecided and the report says so with the question that decides it. A body that decided "no problem" although a fact it reads is not
known says so with ``emit.decided(rule, why)``. So a rule is never silent because a fact was missing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from types import ModuleType
from typing import TYPE_CHECKING, Any, cast

from ..model.report import NOT_DECIDED, Finding, Unknown
from .emit import Decided, Outcome
from .facts import Fact, State

if TYPE_CHECKING:
    from .context import Ctx

RuleBody = Callable[["Ctx"], Iterable[Outcome | Decided]]
Reads = Mapping[str, tuple[Fact, ...]]


def rule(
    rule_id: str,
    *,
    requires: tuple[Fact, ...] = (),
    reads: tuple[Fact, ...] = (),
    needs: Mapping[str, set[Any]] | None = None,
) -> Callable[[RuleBody], RuleBody]:
    """Declare one rule: its id, the components it is about, the further facts its body reads and the matrix
    rows it looks up by key."""

    def mark(body: RuleBody) -> RuleBody:
        setattr(body, "rule_id", rule_id)  # noqa: B010 (attributes on a function object)
        setattr(body, "requires", tuple(requires))  # noqa: B010
        setattr(body, "reads", tuple(requires) + tuple(f for f in reads if f not in requires))  # noqa: B010
        setattr(body, "needs", dict(needs or {}))  # noqa: B010
        return body

    return mark


FamilyParts = tuple[
    tuple[str, ...],
    dict[str, set[Any]],
    dict[str, tuple[Fact, ...]],
    dict[str, tuple[Fact, ...]],
    Callable[["Ctx"], Iterator[Any]],
]


def family(*bodies: RuleBody) -> FamilyParts:
    """RULES, NEEDS, REQUIRES, READS and check(ctx) of a family module, from its @rule functions."""
    ids = tuple(cast("str", getattr(b, "rule_id")) for b in bodies)  # noqa: B009
    needs: dict[str, set[Any]] = {}
    for b in bodies:
        for table, keys in getattr(b, "needs").items():  # noqa: B009
            needs.setdefault(table, set()).update(keys)
    requires = {cast("str", getattr(b, "rule_id")): cast("tuple[Fact, ...]", getattr(b, "requires")) for b in bodies}  # noqa: B009
    reads = {cast("str", getattr(b, "rule_id")): cast("tuple[Fact, ...]", getattr(b, "reads")) for b in bodies}  # noqa: B009

    def check(ctx: Ctx) -> Iterator[Any]:
        for b in bodies:
            yield from b(ctx)

    return ids, needs, requires, reads, check


def reads_of(module: ModuleType | Any) -> Reads:
    return cast("Reads", getattr(module, "READS", {}))


def requires_of(module: ModuleType | Any) -> Reads:
    return cast("Reads", getattr(module, "REQUIRES", {}))


def _state(ctx: Ctx, fact: Fact, states: dict[str, State]) -> State:
    if fact.name not in states:
        states[fact.name] = fact.state(ctx)
    return states[fact.name]


UNDECIDED = (State.UNKNOWN, State.PARTIAL, State.UNSET_BY_LAUNCH)


def undecided_reason(
    ctx: Ctx, facts_read: Iterable[Fact], states: dict[str, State]
) -> tuple[str, tuple[str, ...], tuple[str, ...]]:
    """('' when every fact is known or absent) else the words, the fact names and the questions that decide it."""
    names: list[str] = []
    # one entry per question, with every fact it covers ("Which settings ...? (setting.UCX_*, setting.FI_*: ...)")
    asked: dict[str, list[str]] = {}
    for fact in facts_read:
        state = _state(ctx, fact, states)
        if state is State.UNKNOWN:
            why = fact.why(ctx)
            detail = f"{fact.name}: {why}" if why else f"{fact.name} is unknown"
        elif state is State.PARTIAL:
            detail = f"{fact.name}: present, but its details are unknown"
        elif state is State.UNSET_BY_LAUNCH:
            detail = f"{fact.name}: {fact.why(ctx)}"
        else:
            continue
        names.append(fact.name)
        asked.setdefault(fact.question, []).append(detail)
    words = [f"{question} ({'; '.join(details)})" for question, details in asked.items()]
    return "; ".join(words), tuple(names), tuple(asked)


def settle(module: ModuleType | Any, ctx: Ctx, states: dict[str, State]) -> Iterator[Finding | Unknown]:
    """Run one family and make every silent rule whose facts are not all known an unknown naming them."""
    spoke: set[str] = set()
    for item in module.check(ctx):
        if isinstance(item, Decided):
            spoke.add(item.rule)
            continue
        spoke.add(item.id if isinstance(item, Finding) else item.rule)
        yield item
    required = requires_of(module)
    for rule_id, facts_read in reads_of(module).items():
        if rule_id in spoke:
            continue
        if any(_state(ctx, f, states) is State.ABSENT for f in required.get(rule_id, ())):
            continue  # the component the rule is about is known to be absent: it does not apply
        reason, names, questions = undecided_reason(ctx, facts_read, states)
        if reason:
            yield Unknown(rule=rule_id, reason=NOT_DECIDED + reason, facts=names, questions=questions)
